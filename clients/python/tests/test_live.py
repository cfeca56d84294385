"""The client against a real `quarry serve` (binary from $QUARRY_BINARY)."""

from __future__ import annotations

import unittest

from _server import Server, wait_until

from quarry_client import (
    KB, AlreadyExists, Client, Document, Forbidden, InvalidArgument, ModeUnavailable, NotFound,
    QuarryError, SearchResult, Unauthorized,
)

FILES = [
    ("install.md", b"# Installing\n\nRun the installer, then restart the service.\n"),
    ("cats.md", b"# Cats\n\nThe cat sat on the mat and purred at the installer.\n"),
    ("dogs.txt", b"Dogs bark at the mailman. The installer ignores them.\n"),
    ("notes.md", b"# Notes\n\nNothing about installing here.\n"),
]


class Live(unittest.TestCase):
    server: Server
    client: Client

    @classmethod
    def setUpClass(cls) -> None:
        cls.server = Server()
        cls.client = Client(cls.server.url)
        # A KB with an embedder, so that vector and hybrid search answer.
        cls.client.create_kb("docs", description="client tests",
                             config={"embedder": {"provider": "static:glove-100d"}})
        report = cls.client.upload("docs", FILES[:3], metadata={"lang": "en", "topic": "pets"})
        assert report.added == 3, report
        cls.client.add_document("docs", "notes.md", FILES[3][1].decode(),
                                metadata={"lang": "de"})
        wait_until(lambda: cls.client.kb_status("docs").index_status.vector == "ready",
                   "the vectors of kb docs")

    @classmethod
    def tearDownClass(cls) -> None:
        cls.client.close()
        cls.server.stop()

    # -- server and KBs --------------------------------------------------------------------

    def test_server_routes(self) -> None:
        self.assertEqual(self.client.health()["status"], "ok")
        self.assertEqual(self.client.openapi()["servers"][0]["url"], "/api/v1")
        status = self.client.status()
        self.assertIn("docs", [k.kb for k in status.kbs])
        me = self.client.me()
        self.assertEqual((me.scope, me.anonymous), ("admin", True))
        self.assertIn("static", [p["id"] for p in self.client.plugins()["providers"]])
        self.assertIn('quarry_documents{kb="docs"} 4', self.client.metrics())

    def test_kb_lifecycle(self) -> None:
        kb = self.client.create_kb("scratch", description="tmp",
                                   config={"chunking": {"max_tokens": 256}})
        self.assertIsInstance(kb, KB)
        self.assertEqual(kb.index_status.keyword, "not_built")
        self.assertIn("scratch", [k.name for k in self.client.list_kbs()])
        plan = self.client.update_kb("scratch", {"chunking.max_tokens": 512}, dry_run=True)
        self.assertTrue(plan.dry_run)
        self.assertEqual(plan.config["chunking"]["max_tokens"], 512)
        self.assertEqual(self.client.get_kb("scratch").config["chunking"]["max_tokens"], 256)
        changed = self.client.update_kb("scratch", {"description": "changed"})
        self.assertEqual(changed.description, "changed")
        self.assertEqual(self.client.kb_status("scratch").kb, "scratch")
        self.assertEqual(self.client.delete_kb("scratch"), {"deleted": "scratch"})
        with self.assertRaises(NotFound):
            self.client.get_kb("scratch")

    # -- errors from the real server -------------------------------------------------------

    def test_errors(self) -> None:
        with self.assertRaises(NotFound) as cm:
            self.client.get_kb("nope")
        self.assertEqual((cm.exception.status, cm.exception.details), (404, {"kb": "nope"}))
        with self.assertRaises(AlreadyExists) as cm:
            self.client.create_kb("docs")
        self.assertEqual(cm.exception.status, 409)
        with self.assertRaises(InvalidArgument) as cm:
            self.client.create_kb("other", config={"chunking": {"colour": "blue"}})
        self.assertEqual(cm.exception.code, "invalid_argument")
        with self.assertRaises(InvalidArgument) as cm:
            self.client.list_documents("docs", cursor="not-a-cursor")
        self.assertEqual(cm.exception.details.get("field"), "cursor")
        with self.assertRaises(NotFound):
            self.client.get_document("docs", "01ARZ3NDEKTSV4RRFFQ69G5FAV")
        with self.assertRaises(QuarryError) as cm:
            self.client.grep("docs", "(unclosed")
        self.assertIsInstance(cm.exception, InvalidArgument)

    # -- documents -------------------------------------------------------------------------

    def test_upload_report_items(self) -> None:
        report = self.client.upload(
            "docs", [("people.csv", b"name,role\nAda,engineer\n"), ("logo.png", b"\x89PNG\r\n")],
            metadata={"lang": "en"})
        self.assertEqual((report.added, report.failed), (1, 1))
        failed = [i for i in report.items if i.status == "failed"][0]
        self.assertEqual((failed.path, failed.error["code"]), ("logo.png", "unsupported_format"))
        self.client.delete_document("docs", [i for i in report.items if i.doc_id][0].doc_id)

    def test_document_routes(self) -> None:
        doc = next(self.client.iter_documents("docs", filter={"lang": "de"}))
        self.assertIsInstance(doc, Document)
        full = self.client.get_document("docs", doc.id)
        self.assertIn("Nothing about installing", full.markdown)
        self.assertIsNone(self.client.get_document("docs", doc.id, markdown=False).markdown)
        self.assertIn("# Notes", self.client.get_markdown("docs", doc.id))
        chunks = self.client.list_chunks("docs", doc.id)
        self.assertEqual(chunks[0].heading_path, ["Notes"])
        edited = self.client.edit_document("docs", doc.id, "# Notes\n\nEdited by the client.\n")
        self.assertEqual(edited.id, doc.id)
        self.assertIn("Edited by", self.client.get_markdown("docs", doc.id))
        self.client.reconvert_document("docs", doc.id)
        self.assertNotIn("Edited by", self.client.get_markdown("docs", doc.id))

    def test_bytes_upload_and_delete_where(self) -> None:
        report = self.client.add_document("docs", "hallo.txt", b"Hallo Welt.\n",
                                          metadata={"lang": "xx"})
        self.assertEqual(report.added, 1)
        deleted = self.client.delete_documents_where("docs", {"lang": "xx"})
        self.assertEqual(deleted, [report.items[0].doc_id])
        with self.assertRaises(InvalidArgument):
            self.client.delete_documents_where("docs", {})

    def test_paging_follows_the_cursor(self) -> None:
        self.client.create_kb("paged")
        self.addCleanup(self.client.delete_kb, "paged")
        files = [("f%02d.md" % i, ("# F%d\n\nbody %d\n" % (i, i)).encode()) for i in range(23)]
        self.assertEqual(self.client.upload("paged", files).added, 23)
        first = self.client.list_documents("paged", limit=5)
        self.assertEqual(len(first), 5)
        self.assertIsNotNone(first.next_cursor)
        names = [d.filename for d in self.client.iter_documents("paged", limit=5)]
        self.assertEqual(sorted(names), [f for f, _ in files])

    # -- search and grep -------------------------------------------------------------------

    def test_search_every_mode_with_a_filter(self) -> None:
        pets = {d.id for d in self.client.iter_documents("docs", filter={"topic": "pets"})}
        self.assertEqual(len(pets), 3)
        for mode in ("grep", "keyword", "vector", "hybrid", "auto"):
            with self.subTest(mode=mode):
                res = self.client.search("docs", "installer", mode=mode, top_k=5,
                                         filter={"topic": "pets"})
                self.assertIsInstance(res, SearchResult)
                self.assertEqual(res.mode, "hybrid" if mode == "auto" else mode)
                self.assertEqual(res.degraded, [])
                self.assertEqual(res.index_status.keyword, "ready")
                self.assertGreater(len(res), 0)
                for hit in res:
                    # By doc_id: grep-mode hits come with empty metadata (server, see report).
                    self.assertIn(hit.doc_id, pets)
                    self.assertTrue(0 <= hit.score <= 1)
        hybrid = self.client.search("docs", "installer", mode="hybrid", fusion="rrf",
                                    semantic_ratio=0.5, min_score=0.0)
        self.assertEqual(set(hybrid.per_mode), {"keyword", "vector"})
        adv = self.client.search("docs", "install*", mode="keyword", advanced=True)
        self.assertGreater(len(adv), 0)
        with self.assertRaises(InvalidArgument):
            self.client.search("docs", "x", top_k=0)

    def test_search_degraded_and_mode_unavailable(self) -> None:
        self.client.create_kb("plain")
        self.addCleanup(self.client.delete_kb, "plain")
        self.client.add_document("plain", "a.md", "# A\n\ninstaller\n")
        res = self.client.search("plain", "installer")
        self.assertEqual(res.mode, "keyword")
        self.assertTrue(res.is_degraded)
        self.assertTrue(res.degraded[0].startswith("no_embedder"))
        with self.assertRaises(ModeUnavailable):
            self.client.search("plain", "installer", mode="vector")

    def test_grep(self) -> None:
        res = self.client.grep("docs", "installer|restart", ignore_case=True, context=1,
                               max_matches=10, filter={"lang": "en"})
        self.assertFalse(res.truncated)
        self.assertIn("install.md", [m.filename for m in res])
        self.assertTrue(all(m.ranges for m in res))
        limited = self.client.grep("docs", "the", literal=True, max_matches=1)
        self.assertEqual((len(limited), limited.truncated), (1, True))

    # -- indexing, activity ----------------------------------------------------------------

    def test_reindex_and_progress(self) -> None:
        started = self.client.start_reindex("docs")
        self.assertEqual(started.kb, "docs")
        wait_until(lambda: not self.client.reindex_status("docs").running, "the sweep")
        state = self.client.reindex_status("docs")
        self.assertEqual(state.consecutive_failures, 0)
        self.assertIsInstance(state.last, dict)

    def test_activity(self) -> None:
        page = self.client.list_activity(kb="docs", limit=2)
        self.assertEqual(len(page), 2)
        self.assertIsNotNone(page.next_cursor)
        entries = list(self.client.iter_activity(kb="docs", limit=2))
        ids = [e.id for e in entries]
        self.assertEqual(ids, sorted(ids, reverse=True))
        self.assertIn("kb.create", [e.action for e in entries])
        self.assertGreater(len(entries), 2)

    # -- tokens and secrets ----------------------------------------------------------------

    def test_tokens(self) -> None:
        created = self.client.create_token("reader", "read", kbs=["docs"])
        self.assertTrue(created.secret.startswith("qry_"))
        reader = Client(self.server.url, token=created.secret)
        self.addCleanup(reader.close)
        self.assertGreater(len(reader.search("docs", "installer", mode="keyword")), 0)
        self.assertEqual(reader.me().scope, "read")
        with self.assertRaises(Forbidden) as cm:
            reader.add_document("docs", "x.md", "# x\n")
        self.assertEqual(cm.exception.status, 403)
        with self.assertRaises(Forbidden):
            reader.get_kb("nope")
        self.assertIn(created.token.id, [t.id for t in self.client.list_tokens()])
        self.assertEqual(self.client.revoke_token(created.token.id), {"revoked": created.token.id})
        with self.assertRaises(Unauthorized):
            reader.list_kbs()
        wrong = Client(self.server.url, token="qry_wrong")
        self.addCleanup(wrong.close)
        with self.assertRaises(Unauthorized) as cm:
            wrong.list_kbs()
        self.assertEqual(cm.exception.status, 401)

    def test_secrets(self) -> None:
        self.assertTrue(self.client.put_secret("CLIENT_TEST_KEY", "not-a-key")["stored"])
        self.assertIn("CLIENT_TEST_KEY", self.client.list_secrets())
        self.assertEqual(self.client.delete_secret("CLIENT_TEST_KEY"),
                         {"deleted": "CLIENT_TEST_KEY"})
        with self.assertRaises(NotFound):
            self.client.delete_secret("CLIENT_TEST_KEY")

    # -- the pump (no external database: the listing, an event, the error paths) -----------

    def test_pump(self) -> None:
        listing = self.client.list_pump_use_cases()
        self.assertEqual(listing.use_cases, [])
        self.assertIsInstance(listing.scheduler, bool)
        self.assertIn("used", listing.spend)
        self.assertEqual(self.client.post_event("nothing.listens")["triggered"], [])
        with self.assertRaises(NotFound) as cm:
            self.client.run_pump_use_case("nope")
        self.assertEqual(cm.exception.details, {"use_case": "nope"})
        with self.assertRaises(NotFound):
            self.client.embed_pump_text("nope", "some text")


if __name__ == "__main__":
    unittest.main()
