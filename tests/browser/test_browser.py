"""In a real browser (headless Chromium): JupyterLab with the project's settings opens and runs the explore
notebook on a database of millions of posterior rows, its kernel's peak memory read, the explorer scripted to the
last event of the longest game with nothing in Lab's log console; `make lab` serves on the port and token given;
and the built report shows every figure with no table wider than the page. The slow version runs every notebook
with Run All on the full `make report` data (`pytest -m slow tests/browser`).

Chromium and its driver come from Debian's packages (`make browser-deps`). Without them these tests are skipped,
unless RISKCORE_REQUIRE_BROWSER is set (CI sets it), when they fail instead. Screenshots go to test-output/browser/.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

ROOT = Path(__file__).parents[2]
SHOTS = ROOT / "test-output" / "browser"
CHROMIUM, DRIVER = shutil.which("chromium"), shutil.which("chromedriver")
TOKEN = "riskcore-browser-test"

if not (CHROMIUM and DRIVER):
    if os.environ.get("RISKCORE_REQUIRE_BROWSER"):
        raise RuntimeError("chromium and chromedriver are required (make browser-deps)")
    pytest.skip("chromium and chromedriver not installed (make browser-deps)", allow_module_level=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture
def browser(tmp_path):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    # this machine's network is closed: no background connections, no sandbox as root
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", "--window-size=1400,1000", f"--user-data-dir={tmp_path / 'profile'}"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    driver.set_page_load_timeout(60)
    SHOTS.mkdir(parents=True, exist_ok=True)
    try:
        yield driver
    finally:
        driver.quit()


@contextmanager
def _start_lab(tmp_path: Path, data: Path) -> Iterator[tuple[str, Path, subprocess.Popen]]:
    """JupyterLab on a free port with the project's settings (.jupyter), on `data`, over a copy of the notebooks
    (their jupytext settings included: saving from Lab is tested without touching the repository), with cells'
    execution times recorded. Yields (address, the copy's notebooks folder, the server)."""
    root = tmp_path / "project"
    shutil.copytree(ROOT / "notebooks", root / "notebooks")
    for inputs in ("models", "datasets"):  # read-only inputs a notebook may read (the generalisation's protocol)
        (root / inputs).symlink_to(ROOT / inputs, target_is_directory=True)
    settings = tmp_path / "user-settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True)
    (settings / "tracker.jupyterlab-settings").write_text(json.dumps({"recordTiming": True}))
    port = _free_port()
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(ROOT / ".jupyter"), "RISKCORE_DATA": str(data),
           "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"), "RISKCORE_ROOT": str(root)}
    env.pop("RISKCORE_REPORTS", None)  # as a user's session: notebooks run by hand write to the scratch folder
    log = open(tmp_path / "lab.log", "w")
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyter", "lab", f"--port={port}", "--ServerApp.ip=127.0.0.1",
         f"--IdentityProvider.token={TOKEN}", "--LabApp.expose_app_in_browser=True",
         f"--LabApp.user_settings_dir={tmp_path / 'user-settings'}",
         f"--LabApp.workspaces_dir={tmp_path / 'workspaces'}", f"--ServerApp.root_dir={root}"],
        env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_for_server(base, server, tmp_path / "lab.log")
        yield base, root / "notebooks", server
    finally:
        _stop(server, base)
        log.close()
        assert not _port_open(port), "JupyterLab is still listening"


def _wait_for_server(base: str, server: subprocess.Popen, log: Path, token: str = TOKEN) -> None:
    deadline = time.monotonic() + 90
    while True:
        try:
            urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
            return
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"JupyterLab did not start: {log.read_text()[-2000:]}")
            time.sleep(0.5)


@pytest.fixture
def lab(tmp_path, tmp_path_factory):
    """Lab on a database of a few million posterior rows (`build_bulk_data`): (address, notebooks, data, server)."""
    from tests.test_explore import shared_bulk_data

    data, _ = shared_bulk_data(tmp_path_factory)
    with _start_lab(tmp_path, data) as (base, notebooks, server):
        yield base, notebooks, data, server


def _kernel_peaks_mb(server: subprocess.Popen) -> dict[int, float]:
    """The peak resident memory (VmHWM) of each kernel the server started, by process id."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            pid, rest = stat.read_text().split(" (", 1)
            children.setdefault(int(rest.rsplit(") ", 1)[1].split()[1]), []).append(int(pid))
        except (OSError, IndexError, ValueError):
            continue
    peaks, todo = {}, list(children.get(server.pid, []))
    while todo:
        pid = todo.pop()
        todo += children.get(pid, [])
        try:
            status = Path(f"/proc/{pid}/status").read_text()
            if "ipykernel" in Path(f"/proc/{pid}/cmdline").read_text():
                peaks[pid] = int(status.split("VmHWM:")[1].split()[0]) / 1024
        except (OSError, IndexError):
            continue
    return peaks


def _cell_seconds(driver) -> list[float]:
    """Each executed code cell's time in the open notebook, from the timings Lab recorded."""
    return driver.execute_script(
        NB + "return nb.content.widgets.filter(c => c.model.type === 'code').map(c => { "
        "const t = c.model.getMetadata('execution') || {}; "
        "const a = t['iopub.execute_input'], b = t['shell.execute_reply']; "
        "return a && b ? (Date.parse(b) - Date.parse(a)) / 1000 : null; }).filter(x => x !== null)")


def _kernel_pids(base: str) -> list[int]:
    try:
        with urllib.request.urlopen(f"{base}/api/kernels?token={TOKEN}", timeout=5) as r:
            return [k["id"] for k in json.load(r)]
    except OSError:
        return []


def _stop(server: subprocess.Popen, base: str) -> None:
    """Shut the server down with its kernels; kill its process group if it does not stop."""
    try:
        request = urllib.request.Request(f"{base}/api/shutdown?token={TOKEN}", method="POST")
        urllib.request.urlopen(request, timeout=10)
    except OSError:
        pass
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(timeout=10)


def _wait(driver, script: str, timeout: float = 120, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = driver.execute_script(script)
        if value:
            return value
        time.sleep(0.5)
    driver.save_screenshot(str(SHOTS / "timeout.png"))
    raise AssertionError(f"timed out waiting for {what}")


# the notebook panel (the shell's current widget needs window focus, which a headless browser may not give)
NB = "const nb = Array.from(window.jupyterapp.shell.widgets('main')).find(w => w.sessionContext); "
KERNEL = NB + "const k = nb && nb.sessionContext.session && nb.sessionContext.session.kernel; "
ERRORS = ("return Array.from(document.querySelectorAll('.jp-NotebookPanel .widget-html pre'))"
          ".map(p => p.innerText).filter(t => t.trim())")
# the log console's status item: "N new messages, M log entries for ..." once anything was logged
LOGGED = "const e = document.querySelector('.jp-LogConsoleStatusItem [title]'); return e ? e.title : ''"
IMAGES = "return Array.from(document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .widget-image'))" \
         ".map(i => i.src)"


BOARD = "const b = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .riskcore-board'); "
BELIEFS = "const t = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .riskcore-beliefs'); "
# the explorer's picture and text: [board image, belief table's text]
SHOWN = BOARD + BELIEFS + "const s = [b && b.src, t && t.innerText]"


def _changed(driver, before: list, what: str, which=(0,), timeout: float = 30) -> list:
    """Wait until the explorer's board (0) and/or beliefs (1) differ from `before`; the new ones."""
    differs = " && ".join(f"s[{i}] && s[{i}] !== {json.dumps(before[i])}" for i in which)
    return _wait(driver, SHOWN + f"; return {differs} && s", timeout=timeout, what=what)


def _open_and_run_all(browser, lab: str, name: str, timeout: float = 300) -> None:
    """Open notebooks/NAME.py in Lab (as a notebook, its kernel started without a dialog) and Run All."""
    browser.get(f"{lab}/lab/tree/notebooks/{name}.py?token={TOKEN}&reset")
    _wait(browser, "return document.querySelector('.jp-NotebookPanel .jp-Notebook .jp-Cell') !== null",
          what=f"{name}.py opened as a notebook (not in the text editor)")
    _wait(browser, KERNEL + "return k && k.status === 'idle'", what="the project's kernel, started without a dialog")
    from selenium.webdriver.common.by import By

    assert not browser.find_elements(By.CSS_SELECTOR, ".jp-Dialog"), "a dialog asked for something"
    assert browser.execute_script(KERNEL + "return k.name") == "python3"
    assert browser.execute_script(NB + "return nb.context.model.dirty") is False, \
        "opening the notebook marked it modified"
    browser.execute_script(NB + "window.jupyterapp.shell.activateById(nb.id); "
                           "window.jupyterapp.commands.execute('notebook:run-all-cells'); return true")  # not awaited
    # every code cell executed (an execution count each), or one failed (Run All stops there); the kernel idle
    _wait(browser, KERNEL + "const code = nb.content.widgets.filter(c => c.model.type === 'code'); "
          "return k.status === 'idle' && (code.every(c => c.model.executionCount) || "
          "code.some(c => c.model.outputs.toJSON().some(o => o.output_type === 'error')))",
          timeout=timeout, what=f"Run All of {name}")


def _scroll_to(browser, source: str) -> None:
    """Scroll the open notebook to the first cell whose source holds `source` (Lab draws only the cells in view)."""
    browser.execute_script(NB + "const i = nb.content.widgets.findIndex(c => "
                           f"c.model.sharedModel.getSource().includes({json.dumps(source)})); "
                           "return nb.content.scrollToItem(i, 'start')")


def _cell_errors(browser) -> list[str]:
    """The error outputs (exception name and message) of the open notebook's cells."""
    return browser.execute_script(
        NB + "return nb.content.widgets.filter(c => c.model.type === 'code').flatMap(c => c.model.outputs.toJSON())"
        ".filter(o => o.output_type === 'error').map(o => o.ename + ': ' + o.evalue)")


def test_the_explore_notebook_runs_on_millions_of_posteriors_and_scrubs_to_the_end(lab, browser):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    from riskcore.db import query

    lab, notebooks, data, server = lab
    assert query("SELECT count(*) AS n FROM posteriors", data_dir=data).n[0] >= 3_000_000
    _open_and_run_all(browser, lab, "07-explore")
    browser.save_screenshot(str(SHOTS / "lab-ran.png"))
    assert _cell_errors(browser) == [], "a cell failed"
    plots = browser.execute_script(NB + "return nb.content.widgets.flatMap(c => c.model.type === 'code' ? "
                                   "c.model.outputs.toJSON() : []).filter(o => o.data && o.data['image/png']).length")
    assert plots >= 5, "the dataset tour's plots"
    _scroll_to(browser, "GameExplorer(")  # Lab draws only the cells in view
    shown = _wait(browser, SHOWN + "; return s[0] && s[1] && s", what="the explorer's board and beliefs")
    peaks = _kernel_peaks_mb(server)
    assert len(peaks) == 1 and max(peaks.values()) < 1024, peaks  # the tour sums in DuckDB: no posterior frame
    print(f"kernel peak {max(peaks.values()):.0f} MB; cells (s): {_cell_seconds(browser)}")

    # the board at its picture's aspect ratio, not stretched to the row's height
    size = browser.execute_script(BOARD + "const r = b.getBoundingClientRect(); "
                                  "return [r.width, r.height, b.naturalWidth, b.naturalHeight]")
    assert abs(size[0] / size[1] - size[2] / size[3]) < 0.01, size

    step = [b for b in browser.find_elements(By.CSS_SELECTOR, ".widget-button") if "step" in b.text and "▶" in b.text]
    assert step, "the explorer's step button"
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", step[0])
    step[0].click()
    shown = _changed(browser, shown, "the board redrawn after a step")
    handle = browser.find_element(By.CSS_SELECTOR, ".widget-slider .noUi-handle")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", handle)
    handle.send_keys(Keys.END)  # the slider to the last event: a later turn, other beliefs
    shown = _changed(browser, shown, "board and beliefs after the slider", (0, 1))
    assert browser.execute_script(ERRORS) == [], "the explorer showed an error"
    recogniser = browser.execute_script(
        "const s = document.querySelectorAll('.riskcore-explorer .widget-dropdown select')[1]; "
        "return s.options[s.selectedIndex].text")
    assert "no posteriors" not in recogniser, "it opened on a run without posteriors"

    # the longest game with posteriors to its last event (where a sum above one once broke the beliefs), then the
    # shortest: the slider is clamped, the board redrawn
    run = browser.execute_script("const s = document.querySelector('.riskcore-explorer .widget-dropdown select'); "
                                 "return s.options[s.selectedIndex].text").split()[0]  # a non-breaking space
    events = query("SELECT game_id, count(*) AS n FROM events WHERE run = ? GROUP BY game_id ORDER BY n, game_id",
                   [run], data_dir=data)
    assert len(events), f"no games of run {run!r}"
    shortest, longest = int(events.game_id.iat[0]), int(events.game_id.iat[-1])
    game = browser.find_element(By.CSS_SELECTOR, ".widget-inline-hbox.widget-text input[type=number]")
    for target in (longest, shortest):
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", game)
        game.send_keys(Keys.CONTROL, "a")
        game.send_keys(str(target), Keys.ENTER)
        shown = _changed(browser, shown, f"the board of game {target}")
        if target == longest:
            handle = browser.find_element(By.CSS_SELECTOR, ".widget-slider .noUi-handle")
            browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", handle)
            right = browser.execute_script(  # from the handle to the track's right end: the last event
                "const h = arguments[0].getBoundingClientRect(), "
                "t = document.querySelector('.widget-slider .noUi-target').getBoundingClientRect(); "
                "return Math.ceil(t.right - (h.left + h.width / 2))", handle)
            ActionChains(browser).drag_and_drop_by_offset(handle, right, 0).perform()
            shown = _changed(browser, shown, "the last event of the longest game")
            last = int(events.n.iat[-1]) - 1
            readout = browser.execute_script("return document.querySelector('.widget-slider .widget-readout')"
                                             ".innerText")
            assert readout.strip() == str(last), (readout, last)
            values = [float(x) for x in browser.execute_script(
                "return Array.from(document.querySelectorAll('.riskcore-beliefs td')).map(c => c.innerText)")
                if x.strip() and x.strip()[0].isdigit()]
            assert values and all(0 <= v <= 1 for v in values), [v for v in values if not 0 <= v <= 1]
            browser.save_screenshot(str(SHOTS / "lab-last-event.png"))
        # the current event is in view: inside the log's box and the window, not scrolled away
        inside = browser.execute_script(
            "const c = document.querySelector('.riskcore-log-current').getBoundingClientRect(), "
            "l = document.querySelector('.riskcore-log').getBoundingClientRect(); "
            "return c.height > 0 && c.top >= l.top && c.bottom <= l.bottom && c.top >= 0 && "
            "c.bottom <= window.innerHeight")
        if not inside:  # the explorer may be below the fold: bring it up, then measure again
            browser.execute_script("document.querySelector('.riskcore-log').scrollIntoView({block: 'center'})")
            inside = browser.execute_script(
                "const c = document.querySelector('.riskcore-log-current').getBoundingClientRect(), "
                "l = document.querySelector('.riskcore-log').getBoundingClientRect(); "
                "return c.height > 0 && c.top >= l.top && c.bottom <= l.bottom")
        assert inside, f"game {target}: the current event is out of view"
        assert browser.execute_script(ERRORS) == [], f"switching to game {target} showed an error"
    browser.save_screenshot(str(SHOTS / "lab-switched.png"))

    # the whole explorer (controls, board, beliefs, events) fits a 1400 x 900 screen
    box = browser.execute_script("const r = document.querySelector('.riskcore-explorer').getBoundingClientRect(); "
                                 "return [r.width, r.height]")
    assert box[0] <= 1400 and box[1] <= 900, box
    # the belief table's headers: each agent named briefly, its whole spec on hover
    headers = browser.execute_script("return Array.from(document.querySelectorAll('.riskcore-beliefs th[title]'))"
                                     ".map(h => [h.title, h.innerText])")
    assert headers and all(t.split(":")[0] in text for t, text in headers), headers

    # show the true missions, then switch to a run without posteriors: the board follows, the recogniser box says
    # how to add them
    toggle = browser.find_element(By.CSS_SELECTOR, ".riskcore-explorer input[type=checkbox]")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", toggle)
    toggle.click()
    shown = _changed(browser, shown, "the board with the true missions")
    browser.execute_script(
        "const s = document.querySelector('.riskcore-explorer .widget-dropdown select'); "
        "s.value = Array.from(s.options).find(o => o.text === 'a-plain').value; "
        "s.dispatchEvent(new Event('change', {bubbles: true}))")
    _changed(browser, shown, "the board of run a-plain")
    said = _wait(browser, "const s = document.querySelectorAll('.riskcore-explorer .widget-dropdown select')[1]; "
                 "return s.selectedIndex >= 0 && s.options[s.selectedIndex].text", timeout=30,
                 what="the recogniser box of run a-plain")
    assert said.replace("\xa0", " ") == "no posteriors for this run: riskcore recognize --run a-plain"
    assert browser.execute_script(ERRORS) == [], "toggling missions or switching run showed an error"
    browser.save_screenshot(str(SHOTS / "lab-other-run.png"))
    assert browser.execute_script(LOGGED) == "", "something reached Lab's log console"

    # the tour's mean probability of the true card stays a probability (Lab draws only the cells in view: scroll)
    _scroll_to(browser, "true_card_probability()")
    cells = _wait(browser,
                  "const t = Array.from(document.querySelectorAll('.jp-NotebookPanel .jp-OutputArea-output table'))"
                  ".find(x => x.innerText.includes('recogniser') && x.innerText.includes('point')); "
                  "return t && Array.from(t.querySelectorAll('tbody td')).map(c => c.innerText)",
                  timeout=30, what="the tour's table of the true card's probability")
    values = [float(c) for c in cells if c.strip() not in ("", "NaN")]  # NaN: no posterior at that point
    assert values and all(0 <= v <= 1 for v in values), [v for v in values if not 0 <= v <= 1]
    browser.execute_script(NB + "return nb.context.save()")
    _wait(browser, NB + "return nb.context.model.dirty === false", timeout=30, what="the notebook saved")
    assert not list(notebooks.glob("*.ipynb")), "Lab wrote a notebook file beside the scripts"
    assert (notebooks / "07-explore.py").read_text() == (ROOT / "notebooks" / "07-explore.py").read_text(), \
        "saving changed the script (outputs or metadata written into it)"

    assert browser.execute_script(LOGGED) == "", "something reached Lab's log console"
    # the log-console check can fail: an exception in a widget's callback outside the explorer lands there
    probe = ("import ipywidgets as w\\nprobe = w.Button(description='probe')\\n"
             "probe.on_click(lambda _: 1 / 0)\\nprobe")
    browser.execute_script(NB + "const m = nb.content.model.sharedModel; m.insertCell(m.cells.length, "
                           f"{{cell_type: 'code', source: \"{probe}\"}}); nb.content.activeCellIndex = "
                           "m.cells.length - 1; return window.jupyterapp.commands.execute('notebook:run-cell')")
    _wait(browser, "return Array.from(document.querySelectorAll('.widget-button'))"
          ".some(b => b.innerText.includes('probe'))", timeout=30, what="the probe button")
    button = [b for b in browser.find_elements(By.CSS_SELECTOR, ".widget-button") if "probe" in b.text][0]
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", button)
    button.click()
    assert "log entries" in _wait(browser, LOGGED, timeout=30, what="the probe's error in the log console")


@pytest.mark.slow
def test_every_notebook_runs_all_in_lab_on_the_full_report_data(tmp_path, browser):
    """Run All of every notebook, one after another, on the data `make report` built (`data/`, tens of millions
    of posterior rows): no cell fails, nothing reaches Lab's log console, every kernel peaks under 2 GB."""
    from riskcore import paths
    from riskcore.experiments.bench_notebooks import BENCHED

    data = paths.data_dir()
    if not paths.db_path(data).exists():
        pytest.fail(f"no database at {paths.db_path(data)}: run `make report` first")
    (tmp_path / "project" / "reports").mkdir(parents=True)
    for kind in ("figures", "tables"):  # the report notebook gathers what the experiments wrote there too
        shutil.copytree(ROOT / "reports" / kind, tmp_path / "project" / "scratch" / "reports" / kind)
    with _start_lab(tmp_path, data) as (lab, _, server):
        peaks = {}
        for name in BENCHED:
            _open_and_run_all(browser, lab, name, timeout=1200)
            browser.save_screenshot(str(SHOTS / f"lab-full-{name}.png"))
            assert _cell_errors(browser) == [], f"{name}: a cell failed"
            assert browser.execute_script(ERRORS) == [], f"{name}: a widget showed an error"
            assert browser.execute_script(LOGGED) == "", f"{name}: something reached Lab's log console"
            peaks[name] = max(_kernel_peaks_mb(server).values())
            print(f"{name}: kernel peak {peaks[name]:.0f} MB, slowest cell {max(_cell_seconds(browser)):.1f} s")
            browser.execute_script(KERNEL + "nb.sessionContext.shutdown(); return true")  # the next notebook: a new kernel
            _wait(browser, KERNEL + "return !k", timeout=60, what=f"{name}'s kernel shut down")
    assert max(peaks.values()) <= 2048, peaks


def test_make_lab_serves_on_the_port_and_token_given(tmp_path):
    port, token = _free_port(), "riskcore-make-lab"
    log = tmp_path / "make-lab.log"
    with open(log, "w") as out:
        server = subprocess.Popen(["make", "-s", "lab", f"PORT={port}", f"TOKEN={token}"], cwd=ROOT, stdout=out,
                                  stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_for_server(base, server, log, token)
        with pytest.raises(urllib.error.HTTPError, match="403"):
            urllib.request.urlopen(f"{base}/api/contents?token=wrong", timeout=5)
        with urllib.request.urlopen(f"{base}/api/contents/notebooks?token={token}", timeout=5) as r:
            assert any(f["name"] == "07-explore.py" for f in json.load(r)["content"])  # at the repository root
    finally:
        request = urllib.request.Request(f"{base}/api/shutdown?token={token}", method="POST")
        try:
            urllib.request.urlopen(request, timeout=10)
            server.wait(timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=10)


def test_the_report_shows_every_figure_and_no_table_overflows(browser):
    report = ROOT / "reports" / "report.html"
    browser.get(report.as_uri())
    _wait(browser, "return document.readyState === 'complete'", what="the report to load")
    broken = browser.execute_script(
        "return Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.alt)")
    count = browser.execute_script("return document.images.length")
    assert count >= 10 and broken == [], broken
    page = browser.execute_script("return document.documentElement.clientWidth")
    wide = browser.execute_script(
        "return Array.from(document.querySelectorAll('table')).map((t, k) => [k, t.getBoundingClientRect().right])"
        ".filter(([k, right]) => right > arguments[0] + 1)", page)
    browser.save_screenshot(str(SHOTS / "report.png"))
    assert wide == [], f"tables wider than the page ({page} px): {wide}"
