"""Checks that need no server: Python 3.9 syntax, the operation table against
docs/openapi.json, the error classes against docs/errors.md, and the result classes."""

from __future__ import annotations

import ast
import json
import re
import unittest

from _server import python_files, repo_file

import quarry_client
from quarry_client import OPERATIONS, Client, errors, models
from quarry_client.client import _multipart


class Python39Syntax(unittest.TestCase):
    def test_every_file_parses_as_python_3_9(self) -> None:
        files = python_files()
        self.assertTrue(any(f.endswith("client.py") for f in files))
        for name in files:
            with self.subTest(file=name), open(name, encoding="utf-8") as f:
                ast.parse(f.read(), filename=name, feature_version=(3, 9))


class OperationTable(unittest.TestCase):
    """Every operationId of docs/openapi.json has a method, and the table names no other."""

    @classmethod
    def setUpClass(cls) -> None:
        with open(repo_file("docs", "openapi.json"), encoding="utf-8") as f:
            spec = json.load(f)
        cls.operation_ids = {
            op["operationId"]
            for item in spec["paths"].values()
            for method, op in item.items()
            if method in ("get", "put", "post", "patch", "delete") and "operationId" in op
        }

    def test_every_operation_has_a_method(self) -> None:
        missing = sorted(self.operation_ids - set(OPERATIONS))
        self.assertEqual(missing, [], "operationIds without a client method in OPERATIONS: %s"
                         % ", ".join(missing))

    def test_no_method_for_an_operation_that_is_gone(self) -> None:
        stale = sorted(set(OPERATIONS) - self.operation_ids)
        self.assertEqual(stale, [], "OPERATIONS names operationIds docs/openapi.json no longer "
                         "has: %s" % ", ".join(stale))

    def test_the_methods_exist(self) -> None:
        for op, names in OPERATIONS.items():
            for name in (names,) if isinstance(names, str) else names:
                with self.subTest(operation=op):
                    self.assertTrue(callable(getattr(Client, name, None)),
                                    "%s -> Client.%s does not exist" % (op, name))


class ErrorClasses(unittest.TestCase):
    def summary_codes(self) -> list:
        with open(repo_file("docs", "errors.md"), encoding="utf-8") as f:
            text = f.read()
        table = text.split("## Summary", 1)[1].split("\n## ", 1)[0]
        codes = re.findall(r"^\| \[`([a-z_]+)`\]", table, re.M)
        self.assertGreater(len(codes), 20, "could not read the summary table of errors.md")
        return codes

    def test_every_code_in_errors_md_has_a_class(self) -> None:
        missing = [c for c in self.summary_codes() if c not in errors.ERROR_CLASSES]
        self.assertEqual(missing, [], "error codes without a class: %s" % ", ".join(missing))

    def test_every_code_of_the_openapi_enum_has_a_class(self) -> None:
        with open(repo_file("docs", "openapi.json"), encoding="utf-8") as f:
            enum = json.load(f)["components"]["schemas"]["ErrorCode"]["enum"]
        self.assertEqual(sorted(set(enum) - set(errors.ERROR_CLASSES)), [])

    def test_classes_are_exported_and_derive_from_the_base(self) -> None:
        for code, cls in errors.ERROR_CLASSES.items():
            self.assertTrue(issubclass(cls, quarry_client.QuarryError))
            self.assertIs(getattr(quarry_client, cls.__name__), cls)
            self.assertEqual(cls.code, code)

    def test_envelope_decoding(self) -> None:
        body = b'{"error": {"code": "not_found", "message": "no kb", "details": {"kb": "x"}}}'
        e = errors.error_from_response(404, body)
        self.assertIsInstance(e, quarry_client.NotFound)
        self.assertEqual((e.code, e.message, e.details, e.status), ("not_found", "no kb",
                                                                     {"kb": "x"}, 404))

    def test_unknown_code_maps_to_the_base_class(self) -> None:
        e = errors.error_from_response(418, b'{"error": {"code": "teapot", "message": "m"}}')
        self.assertIs(type(e), quarry_client.QuarryError)
        self.assertEqual(e.code, "teapot")

    def test_a_body_that_is_not_an_envelope(self) -> None:
        e = errors.error_from_response(502, b"<html>Bad gateway</html>", retry_after=2.0)
        self.assertIs(type(e), quarry_client.QuarryError)
        self.assertEqual((e.code, e.status, e.retry_after), ("http_502", 502, 2.0))


class Models(unittest.TestCase):
    def test_unknown_fields_stay_in_raw(self) -> None:
        data = {"kb": "k", "mode": "keyword", "degraded": [], "took_ms": 1.0,
                "index_status": {"keyword": "ready", "vector": "not_built", "graph": "x"},
                "hits": [{"doc_id": "d", "score": 0.5, "new_field": [1]}],
                "per_mode": {}, "future": True}
        res = models.SearchResult.from_json(data)
        self.assertEqual(res.hits[0].doc_id, "d")
        self.assertEqual(res.hits[0].raw["new_field"], [1])
        self.assertEqual(res.raw["future"], True)
        self.assertEqual(res.index_status.raw["graph"], "x")
        self.assertFalse(res.is_degraded)

    def test_missing_fields_are_none(self) -> None:
        doc = models.Document.from_json({"id": "x"})
        self.assertEqual((doc.id, doc.filename, doc.index_status), ("x", None, None))


class Multipart(unittest.TestCase):
    def test_form_shape(self) -> None:
        body, ctype = _multipart([("a.md", b"# A\n"), ("b\"c.txt", b"b")], {"lang": "en"}, True)
        boundary = ctype.split("boundary=", 1)[1]
        parts = body.split(b"--" + boundary.encode())
        self.assertEqual(parts[-1], b"--\r\n")
        self.assertIn(b'name="file"; filename="a.md"', parts[1])
        self.assertIn(b'filename="b\\"c.txt"', parts[2])
        self.assertIn(b'name="metadata"', parts[3])
        self.assertIn(b'{"lang": "en"}', parts[3])
        self.assertIn(b'name="replace"', parts[4])

    def test_no_files_is_an_error(self) -> None:
        with self.assertRaises(ValueError):
            _multipart([], None, False)


if __name__ == "__main__":
    unittest.main()
