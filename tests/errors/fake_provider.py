#!/usr/bin/env python3
"""An OpenAI-compatible embeddings endpoint that fails on purpose, for tests/errors/: the
request's `model` picks the answer.
  ok        4-dimensional vectors          r401   401 invalid API key
  r429      429 with Retry-After: 0        r500   500 server error
  r404      404 unknown model              r413   413 input too long
  r400input 400 about the input            slow   answers after 3 s
  wrongdim  vectors of length 3 whatever `dimensions` asked
Usage: fake_provider.py PORTFILE   (writes the port it listens on to PORTFILE, serves until killed)
"""
import http.server
import json
import sys
import time


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, body, headers=()):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        req = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        model, inputs = req.get("model", ""), req.get("input", [])
        if isinstance(inputs, str):
            inputs = [inputs]
        err = lambda msg, typ: {"error": {"message": msg, "type": typ}}
        if model == "r401":
            return self.answer(401, err("Incorrect API key provided", "invalid_request_error"))
        if model == "r429":
            return self.answer(429, err("Rate limit reached", "requests"), [("Retry-After", "0")])
        if model == "r500":
            return self.answer(500, err("The server had an error", "server_error"))
        if model == "r404":
            return self.answer(404, err("The model 'r404' does not exist", "invalid_request_error"))
        if model == "r413":
            return self.answer(413, err("Request too large", "invalid_request_error"))
        if model == "r400input":
            return self.answer(400, err("This model's maximum context length is 8 tokens, "
                                        "however your input is too long", "invalid_request_error"))
        if model == "slow":
            time.sleep(3)
        dim = 3 if model == "wrongdim" else 4
        data = [{"object": "embedding", "index": i, "embedding": [0.5] * dim}
                for i in range(len(inputs))]
        return self.answer(200, {"object": "list", "data": data, "model": model,
                                 "usage": {"prompt_tokens": 1, "total_tokens": 1}})


if __name__ == "__main__":
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(sys.argv[1], "w") as f:
        f.write(str(srv.server_address[1]))
    srv.serve_forever()
