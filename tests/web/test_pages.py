"""Routes: the index, step pages, and the errors a bad URL gets."""

from __future__ import annotations

import base64
import hashlib
import json
import re

from fastapi.testclient import TestClient

HTML = {"accept": "text/html"}


def test_index_lists_lessons_with_chapter_and_step_count(client: TestClient) -> None:
    response = client.get("/", headers=HTML)
    assert response.status_code == 200
    assert 'href="/lessons/hello/1"' in response.text
    assert "Hello, Pyodide" in response.text
    assert "ch 0 · fixtures" in response.text
    assert "3 steps" in response.text


def test_step_page_renders_prose_and_cells(client: TestClient) -> None:
    response = client.get("/lessons/hello/1", headers=HTML)
    assert response.status_code == 200
    text = response.text
    assert "<h1>Where does this code run?</h1>" in text
    assert "This step's cells need only the standard library." in text
    assert text.count('class="cell"') == 2
    assert "print(&#34;platform:&#34;, sys.platform)" in text
    assert "disabled>Run</button>" in text
    assert 'rel="next" data-step-link href="/lessons/hello/2"' in text
    assert 'rel="prev"' not in text


def test_step_page_carries_kernel_config(client: TestClient) -> None:
    text = client.get("/lessons/hello/2", headers=HTML).text
    raw = re.search(r'<meta name="promptdojo-kernel" content="([^"]*)">', text)
    assert raw is not None
    config = json.loads(raw.group(1).replace("&#34;", '"').replace("&amp;", "&"))
    assert config["lesson"] == "hello"
    # The kernel config is the same on every step of a lesson: the worker outlives steps.
    assert "step" not in config
    assert config == json.loads(
        re.search(
            r'<meta name="promptdojo-kernel" content="([^"]*)">',
            client.get("/lessons/hello/1", headers=HTML).text,
        )
        .group(1)
        .replace("&#34;", '"')
        .replace("&amp;", "&")
    )
    assert config["workerUrl"].startswith("/assets/worker-")
    assert config["pyodideUrl"] == "/assets/pyodide/314.0.7/"
    assert re.fullmatch(r"/bundle/promptdojo-[0-9a-f]{16}\.zip", config["bundleUrl"])
    assert config["packages"] == []


def test_lesson_url_redirects_to_first_step(client: TestClient) -> None:
    response = client.get("/lessons/hello", follow_redirects=False)
    assert response.status_code == 307
    assert response.headers["location"] == "/lessons/hello/1"


def test_unknown_lesson_is_a_404_page_not_a_traceback(client: TestClient) -> None:
    response = client.get("/lessons/nope/1", headers=HTML)
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("text/html")
    assert "There is no lesson called “nope”." in response.text
    assert 'href="/"' in response.text
    assert "Traceback" not in response.text


def test_unknown_lesson_404_says_what_exists_to_a_browser_and_to_curl(
    client: TestClient,
) -> None:
    page = client.get("/lessons/nope/1", headers=HTML)
    assert "“Hello, Pyodide” (/lessons/hello/1)" in page.text
    curl = client.get("/lessons/nope", headers={"accept": "*/*"})  # what curl sends
    assert curl.status_code == 404
    assert curl.headers["content-type"].startswith("text/plain")
    assert curl.text.startswith("There is no lesson called “nope”. The lessons are: ")
    assert "“Hello, Pyodide” (/lessons/hello/1)" in curl.text


def test_step_number_out_of_range_is_a_404_naming_the_range(client: TestClient) -> None:
    for number in ("0", "4", "99999999999999999999", "-1", "two"):
        response = client.get(f"/lessons/hello/{number}", headers=HTML)
        assert response.status_code == 404, number
        assert "has steps 1 to 3" in response.text


def test_a_step_number_int_refuses_is_the_normal_404_page(client: TestClient) -> None:
    # "²" is a digit to str.isdigit() but not to int(); 5,000 digits are past int()'s limit.
    for number in ("²", "１", "1" * 5000):
        response = client.get(f"/lessons/hello/{number}", headers=HTML)
        assert response.status_code == 404, number[:10]
        assert response.headers["content-type"].startswith("text/html")
        assert "has steps 1 to 3" in response.text
        assert len(response.text) < 10_000  # the number is not echoed back whole


def test_unknown_route_without_html_accept_gets_json(client: TestClient) -> None:
    response = client.get("/nothing-here", headers={"accept": "application/json"})
    assert response.status_code == 404
    assert response.json() == {"detail": "Not Found"}


def test_pages_carry_an_etag_and_answer_304_when_unchanged(client: TestClient) -> None:
    first = client.get("/lessons/hello/1", headers=HTML)
    etag = first.headers["etag"]
    assert first.headers["cache-control"] == "no-cache"
    again = client.get("/lessons/hello/1", headers={**HTML, "if-none-match": etag})
    assert again.status_code == 304
    assert again.content == b""
    other = client.get("/lessons/hello/2", headers={**HTML, "if-none-match": etag})
    assert other.status_code == 200
    assert client.get("/", headers={"if-none-match": etag}).status_code == 200


def test_recorded_outputs_are_in_the_page(client: TestClient) -> None:
    text = client.get("/lessons/hello/1", headers=HTML).text
    assert 'class="recorded"' in text
    assert "platform: linux" in text


def test_step_page_asks_for_start_js_first_and_leaves_the_downloads_to_the_worker(
    client: TestClient,
) -> None:
    """start.js (which adopts the worker the inline script started, or starts it) is the page's
    first request of its own, at high priority. The page preloads none of the big files: the
    worker asks for them as it starts, and a page preload of the same file would hold one of the
    browser's six connections and be decoded twice (and a first visit to a host without
    isolation headers, which reloads, would fetch them for nothing)."""
    text = client.get("/lessons/hello/1", headers=HTML).text
    assert re.search(r'<script type="module" async fetchpriority="high" src="/assets/start-', text)
    assert text.index("start-") < text.index('rel="stylesheet"')
    assert "preload" not in text


def test_step_page_lists_every_step_with_its_exercises(client: TestClient) -> None:
    text = client.get("/lessons/hello/2", headers=HTML).text
    steps = re.findall(r'<li data-step="(\d+)" data-exercises="([^"]*)">', text)
    assert [number for number, _ in steps] == ["1", "2", "3"]
    assert 'aria-current="step">' in text.split('data-step="2"')[1].split("</li>")[0]
    assert "steps done" in text
    assert "Export my work" in text


def test_cells_carry_a_starter_hash_and_run_all_above_from_the_second_cell(
    client: TestClient,
) -> None:
    text = client.get("/lessons/hello/1", headers=HTML).text
    hashes = re.findall(r'data-starter-hash="([0-9a-f]*)"', text)
    assert [len(h) for h in hashes] == [16, 16]
    assert hashes[0] != hashes[1]
    # The first cell has nothing above it.
    first, second = text.split('class="cell"')[1:3]
    assert "Run all above" not in first
    assert "Run all above" in second
    data = json.loads(re.search(r'id="step-data">(.*?)</script>', text).group(1))
    assert (data["lesson"], data["step"]) == ("hello", 1)


def test_pages_are_gzipped_once_for_clients_that_accept_it(client: TestClient) -> None:
    plain = client.get("/lessons/hello/1", headers={**HTML, "accept-encoding": "identity"})
    assert "content-encoding" not in plain.headers
    zipped = client.get("/lessons/hello/1", headers={**HTML, "accept-encoding": "gzip, br"})
    assert zipped.headers["content-encoding"] == "gzip"
    assert zipped.headers["vary"] == "accept-encoding"
    assert zipped.text == plain.text  # httpx decodes the gzip body
    assert int(zipped.headers["content-length"]) < len(plain.content) / 2
    # Each representation has its own ETag, and each revalidates.
    assert zipped.headers["etag"] != plain.headers["etag"]
    for response, encoding in ((plain, "identity"), (zipped, "gzip")):
        again = client.get(
            "/lessons/hello/1",
            headers={
                **HTML,
                "accept-encoding": encoding,
                "if-none-match": response.headers["etag"],
            },
        )
        assert again.status_code == 304


def test_the_one_inline_script_comes_first_and_the_csp_allows_it_by_its_hash(
    client: TestClient,
) -> None:
    """Isolation on a header-less host starts before anything else of the page loads."""
    response = client.get("/lessons/hello/1", headers=HTML)
    text = response.text
    inline = re.findall(r"<script(?![^>]*\bsrc=)([^>]*)>(.*?)</script>", text, re.S)
    code = [body for attrs, body in inline if "application/json" not in attrs]
    assert len(code) == 1
    digest = base64.b64encode(hashlib.sha256(code[0].encode()).digest()).decode()
    csp = response.headers["content-security-policy"]
    script_src = next(d for d in csp.split("; ") if d.startswith("script-src"))
    assert f"'sha256-{digest}'" in script_src.split()
    assert "'unsafe-inline'" not in script_src
    assert 'data-worker="/sw.js" data-scope="/"' in text
    assert text.index("promptdojoIsolation") < text.index('rel="stylesheet"')
    # It starts the kernel worker from the kernel's configuration, which therefore comes first.
    assert text.index('name="promptdojo-kernel"') < text.index("promptdojoEarlyKernel")
    assert client.get("/sw.js").status_code == 200
    # The index boots no Python: no inline script there.
    index = client.get("/", headers=HTML).text
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", index)


def test_wrong_answers_never_reach_the_page(tmp_path) -> None:
    """The check and the solution are in the page source; the wrong answers are not."""
    import shutil

    from promptdojo.web.app import create_app
    from promptdojo.web.settings import Settings
    from tests.conftest import ROOT

    lessons = tmp_path / "lessons"
    shutil.copytree(ROOT / "tests" / "fixtures" / "checking" / "wrong", lessons / "wrong")
    client = TestClient(create_app(Settings(lessons_dir=lessons, package_cache_dir=tmp_path)))
    response = client.get("/lessons/wrong-answers/1", headers=HTML)
    assert response.status_code == 200
    text = response.text
    assert "it should be 4" in text
    assert "return 2 * x" in text
    for wrong in ("x + 1", "return 4", "x * 3", "leak = ", "double-wrong", "is 8"):
        assert wrong not in text, wrong
