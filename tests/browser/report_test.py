#!/usr/bin/env python3
"""The compare report in a real browser (headless Chromium through chromedriver).

Usage: report_test.py [--lossless BIN] [--artifacts DIR] INPUT

INPUT is a results.json (rendered first with `BIN report INPUT -o DIR/report.html`)
or a report.html (loaded as it is), so the same test runs on the hand-made
fixture and on real `lossless compare` output. The page is opened from a
file:// URL and the test fails when
  - the browser console holds a SEVERE entry (a broken SVG, a blocked request);
  - one of the five charts (svg[data-chart=busbw|latency_cdf|iterations|incast|tco])
    is missing, or an svg[data-chart] has no `.mark` element of non-zero
    rendered size (getBoundingClientRect);
  - two text labels of one chart overlap, or a label sticks out of its chart;
  - the page is wider than the window (a chart or table that does not fit).
A full-page screenshot goes to DIR/report.png, one of each chart, the matrix
and the operations facts to DIR/report-NAME.png (DIR defaults to ./test-artifacts).

Exit 0 pass, 1 fail, 77 skipped: chromium, chromedriver or selenium missing
(under CI=true a missing tool fails instead).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
CHARTS = ["busbw", "latency_cdf", "iterations", "incast", "tco"]
WIDTH = 1100


def missing(what):
    if os.environ.get("CI") == "true":
        print(f"FAIL: {what} is missing under CI=true (scripts/install-deps.sh installs it)")
        sys.exit(1)
    print(f"SKIP: {what} is not installed")
    sys.exit(SKIP)


def find_browser():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    missing("chromium")


def find_driver():
    path = shutil.which("chromedriver") or (
        "/usr/bin/chromedriver" if os.path.exists("/usr/bin/chromedriver") else None)
    if not path:
        missing("chromedriver (Debian package chromium-driver)")
    return path


# Runs in the page: facts about every chart as one JSON-able object.
MEASURE_JS = r"""
const out = [];
for (const svg of document.querySelectorAll('svg[data-chart]')) {
  const box = svg.getBoundingClientRect();
  const marks = [...svg.querySelectorAll('.mark')].map(m => m.getBoundingClientRect())
      .filter(r => r.width > 0 || r.height > 0);
  const texts = [...svg.querySelectorAll('text')].map(t => {
    const r = t.getBoundingClientRect();
    return {s: t.textContent, l: r.left, t: r.top, r: r.right, b: r.bottom};
  }).filter(r => r.r > r.l);
  out.push({chart: svg.getAttribute('data-chart'), w: box.width, h: box.height,
            left: box.left, top: box.top, right: box.right, bottom: box.bottom,
            marks: marks.length, texts: texts});
}
return {charts: out, scrollWidth: document.documentElement.scrollWidth,
        scrollHeight: document.documentElement.scrollHeight,
        innerWidth: window.innerWidth};
"""


def overlaps(a, b, slack=1.0):
    return (min(a["r"], b["r"]) - max(a["l"], b["l"]) > slack and
            min(a["b"], b["b"]) - max(a["t"], b["t"]) > slack)


def check(facts):
    problems = []
    seen = [c["chart"] for c in facts["charts"]]
    for name in CHARTS:
        if name not in seen:
            problems.append(f"chart {name}: no svg[data-chart={name}] in the page")
    for c in facts["charts"]:
        name = c["chart"]
        if c["marks"] < 1:
            problems.append(f"chart {name}: no .mark of non-zero size (a chart without data?)")
        if c["w"] < 300 or c["h"] < 120:
            problems.append(f"chart {name}: drawn {c['w']:.0f}x{c['h']:.0f} px, too small to read")
        texts = c["texts"]
        for i, a in enumerate(texts):
            if a["l"] < c["left"] - 1 or a["r"] > c["right"] + 1 or a["t"] < c["top"] - 1 or \
                    a["b"] > c["bottom"] + 1:
                problems.append(f"chart {name}: label {a['s']!r} sticks out of the chart")
            for b in texts[i + 1:]:
                if overlaps(a, b):
                    problems.append(f"chart {name}: labels {a['s']!r} and {b['s']!r} overlap")
    if facts["scrollWidth"] > facts["innerWidth"] + 1:
        problems.append(f"page is {facts['scrollWidth']} px wide in a {facts['innerWidth']} px "
                        "window: something does not fit")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("input", help="results.json (rendered with --lossless) or report.html")
    ap.add_argument("--lossless", help="the lossless binary (needed for a .json input)")
    ap.add_argument("--artifacts", default="test-artifacts",
                    help="folder for report.png (and report.html of a .json input)")
    args = ap.parse_args()

    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        missing("selenium for Python (Debian package python3-selenium)")
    browser = find_browser()
    driver_path = find_driver()

    os.makedirs(args.artifacts, exist_ok=True)
    html = os.path.abspath(args.input)
    if args.input.endswith(".json"):
        if not args.lossless:
            print("FAIL: a .json input needs --lossless BIN to render it")
            return 1
        html = os.path.abspath(os.path.join(args.artifacts, "report.html"))
        r = subprocess.run([args.lossless, "report", args.input, "-o", html],
                           capture_output=True, text=True)
        if r.returncode != 0:
            print(f"FAIL: lossless report exited {r.returncode}: {r.stderr.strip()}")
            return 1
    if not os.path.exists(html):
        print(f"FAIL: {html}: no such file")
        return 1

    opts = webdriver.ChromeOptions()
    opts.binary_location = browser
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              f"--window-size={WIDTH},900", "--hide-scrollbars", "--force-device-scale-factor=1",
              "--no-first-run", "--disable-extensions", "--disable-background-networking"):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    profile = tempfile.mkdtemp(prefix="lossless-chromium-")
    opts.add_argument(f"--user-data-dir={profile}")
    driver = None
    try:
        driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=opts)
        driver.set_page_load_timeout(30)
        driver.get("file://" + html)
        facts = driver.execute_script(MEASURE_JS)
        problems = check(facts)
        severe = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
        for e in severe:
            problems.append(f"console SEVERE: {e.get('message')}")
        # Full page: a viewport as tall as the document (the window's own size
        # leaves out its decorations), then one screenshot.
        height = min(int(facts["scrollHeight"]), 16000)
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                               {"width": WIDTH, "height": height, "deviceScaleFactor": 1,
                                "mobile": False})
        png = os.path.join(args.artifacts, "report.png")
        if not driver.save_screenshot(png):
            problems.append(f"could not save the screenshot to {png}")
        # Each chart, the matrix and the facts alone too, at full size, for a closer look.
        for svg in driver.find_elements("css selector", "svg[data-chart]"):
            svg.screenshot(os.path.join(args.artifacts,
                                        f"report-{svg.get_attribute('data-chart')}.png"))
        for sel, name in (("table.matrix", "matrix"), ("section.facts", "operations")):
            for el in driver.find_elements("css selector", sel):
                el.screenshot(os.path.join(args.artifacts, f"report-{name}.png"))
    finally:
        if driver is not None:
            driver.quit()
        shutil.rmtree(profile, ignore_errors=True)

    for c in facts["charts"]:
        print(f"chart {c['chart']}: {c['marks']} marks, {c['w']:.0f}x{c['h']:.0f} px")
    print(f"screenshot: {os.path.abspath(png)}")
    for p in problems:
        print("FAIL " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
