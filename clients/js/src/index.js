// quarry-client: the JavaScript client of Quarry's REST API (docs/rest.md). See README.md.
export { QuarryClient, OPERATIONS, DEFAULT_BASE_URL } from './client.js';
export * from './errors.js';
