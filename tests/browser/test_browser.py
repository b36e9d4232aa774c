"""In a real browser (headless Chromium): JupyterLab with the project's settings opens and runs the explore
notebook, and the built report shows every figure with no table wider than the page.

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
import urllib.request
from pathlib import Path

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


@pytest.fixture
def lab(tmp_path):
    """JupyterLab on a free port with the project's settings (.jupyter), on a small database; always stopped."""
    from tests.test_explore import build_explore_data

    data = build_explore_data(tmp_path / "data")
    # a copy of the notebooks (their jupytext settings included), so that saving from Lab is tested without
    # touching the repository
    root = tmp_path / "project"
    shutil.copytree(ROOT / "notebooks", root / "notebooks")
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
        deadline = time.monotonic() + 90
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/status?token={TOKEN}", timeout=2)
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"JupyterLab did not start: {(tmp_path / 'lab.log').read_text()[-2000:]}")
                time.sleep(0.5)
        yield base, root / "notebooks", data
    finally:
        _stop(server, base)
        log.close()
        assert not _port_open(port), "JupyterLab is still listening"


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


def test_the_explore_notebook_opens_as_a_notebook_runs_and_scrubs(lab, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    lab, notebooks, data = lab
    browser.get(f"{lab}/lab/tree/notebooks/07-explore.py?token={TOKEN}&reset")
    _wait(browser, "return document.querySelector('.jp-NotebookPanel .jp-Notebook .jp-Cell') !== null",
          what="the .py file opened as a notebook (not in the text editor)")
    _wait(browser, KERNEL + "return k && k.status === 'idle'", what="the project's kernel, started without a dialog")
    assert not browser.find_elements(By.CSS_SELECTOR, ".jp-Dialog"), "a dialog asked for something"
    assert browser.execute_script(KERNEL + "return k.name") == "python3"
    assert browser.execute_script(NB + "return nb.context.model.dirty") is False, \
        "opening the notebook marked it modified"
    browser.save_screenshot(str(SHOTS / "lab-opened.png"))

    browser.execute_script(NB + "window.jupyterapp.shell.activateById(nb.id); "
                           "return window.jupyterapp.commands.execute('notebook:run-all-cells')")
    all_drawn = "; return s.length >= 2 && s.every(x => x) && s"
    images = _wait(browser, IMAGES.replace("return ", "const s = ") + all_drawn,
                   what="the explorer's board and posterior images")
    plots = "document.querySelectorAll('.jp-NotebookPanel .jp-OutputArea-output img').length >= 5"
    _wait(browser, KERNEL + "return k.status === 'idle' && " + plots,
          what="the dataset tour's plots")
    browser.save_screenshot(str(SHOTS / "lab-ran.png"))

    step = [b for b in browser.find_elements(By.CSS_SELECTOR, ".widget-button") if "step" in b.text and "▶" in b.text]
    assert step, "the explorer's step button"
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", step[0])
    step[0].click()
    changed = f"; return s[0] !== {json.dumps(images[0])} && s"
    stepped = _wait(browser, IMAGES.replace("return ", "const s = ") + changed,
                    timeout=30, what="the board redrawn after a step")
    handle = browser.find_element(By.CSS_SELECTOR, ".widget-slider .noUi-handle")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", handle)
    handle.send_keys(Keys.END)  # the slider to the last event: a later turn, other beliefs
    moved = _wait(browser, IMAGES.replace("return ", "const s = ") + f"; return s[1] !== {json.dumps(stepped[1])} && "
                  f"s[0] !== {json.dumps(stepped[0])} && s", timeout=30, what="board and posteriors after the slider")
    assert moved[0] != images[0] and moved[1] != images[1]
    browser.save_screenshot(str(SHOTS / "lab-scrubbed.png"))
    assert browser.execute_script(ERRORS) == [], "the explorer showed an error"
    recogniser = browser.execute_script(
        "const s = Array.from(document.querySelectorAll('.jp-NotebookPanel .widget-dropdown select'))"
        ".find(x => Array.from(x.options).some(o => o.text.includes('inverse') || o.text.includes('no posteriors'))); "
        "return s.options[s.selectedIndex].text")
    assert "no posteriors" not in recogniser, "it opened on a run without posteriors"

    # at the last event of the longest game, switch to the shortest: the slider is clamped, the board redrawn
    from riskcore.db import query

    events = query("SELECT game_id, count(*) AS n FROM events WHERE run = 'explore' GROUP BY game_id ORDER BY n",
                   data_dir=data)
    shortest, longest = int(events.game_id.iat[0]), int(events.game_id.iat[-1])
    game = browser.find_element(By.CSS_SELECTOR, ".widget-inline-hbox.widget-text input[type=number]")
    seen = moved[0]
    for target in (longest, shortest):
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", game)
        game.send_keys(Keys.CONTROL, "a")
        game.send_keys(str(target), Keys.ENTER)
        shown = _wait(browser, IMAGES.replace("return ", "const s = ") + f"; return s[0] !== {json.dumps(seen)} && s",
                      timeout=30, what=f"the board of game {target}")
        seen = shown[0]
        if target == longest:
            from selenium.webdriver.common.action_chains import ActionChains

            handle = browser.find_element(By.CSS_SELECTOR, ".widget-slider .noUi-handle")
            browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", handle)
            right = browser.execute_script(  # from the handle to the track's right end: the last event
                "const h = arguments[0].getBoundingClientRect(), "
                "t = document.querySelector('.widget-slider .noUi-target').getBoundingClientRect(); "
                "return Math.ceil(t.right - (h.left + h.width / 2))", handle)
            ActionChains(browser).drag_and_drop_by_offset(handle, right, 0).perform()
            seen = _wait(browser, IMAGES.replace("return ", "const s = ") +
                         f"; return s[0] !== {json.dumps(seen)} && s", timeout=30, what="the last event")[0]
        assert browser.execute_script(ERRORS) == [], f"switching to game {target} showed an error"
    browser.save_screenshot(str(SHOTS / "lab-switched.png"))

    # the whole explorer (controls, board, posteriors, events) fits a 1400 x 900 screen
    box = browser.execute_script("const r = document.querySelector('.riskcore-explorer').getBoundingClientRect(); "
                                 "return [r.width, r.height]")
    assert box[0] <= 1400 and box[1] <= 900, box

    # show the true missions, then switch to a run without posteriors: the board follows, nothing breaks
    toggle = browser.find_element(By.CSS_SELECTOR, ".riskcore-explorer input[type=checkbox]")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", toggle)
    toggle.click()
    seen = _wait(browser, IMAGES.replace("return ", "const s = ") + f"; return s[0] !== {json.dumps(seen)} && s",
                 timeout=30, what="the board with the true missions")[0]
    browser.execute_script(
        "const s = document.querySelector('.riskcore-explorer .widget-dropdown select'); "
        "s.value = Array.from(s.options).find(o => o.text === 'a-plain').value; "
        "s.dispatchEvent(new Event('change', {bubbles: true}))")
    _wait(browser, IMAGES.replace("return ", "const s = ") + f"; return s[0] !== {json.dumps(seen)} && s",
          timeout=30, what="the board of run a-plain")
    assert browser.execute_script(ERRORS) == [], "toggling missions or switching run showed an error"
    browser.save_screenshot(str(SHOTS / "lab-other-run.png"))
    assert browser.execute_script(LOGGED) == "", "something reached Lab's log console"

    # the tour's mean probability of the true card stays a probability (Lab draws only the cells in view: scroll)
    browser.execute_script(NB + "const i = nb.content.widgets.findIndex(c => "
                           "c.model.sharedModel.getSource().includes('true_card_probability()')); "
                           "return nb.content.scrollToItem(i, 'start')")
    cells = _wait(browser,
                  "const t = Array.from(document.querySelectorAll('.jp-NotebookPanel .jp-OutputArea-output table'))"
                  ".find(x => x.innerText.includes('recogniser') && x.innerText.includes('point')); "
                  "return t && Array.from(t.querySelectorAll('tbody td')).map(c => c.innerText)",
                  timeout=30, what="the tour's table of the true card's probability")
    values = [float(c) for c in cells if c.strip()]
    assert values and all(0 <= v <= 1 for v in values), values
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
