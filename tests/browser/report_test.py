#!/usr/bin/env python3
"""The compare report in a real browser (headless Chromium through chromedriver).

Usage: report_test.py [--lossless BIN] [--artifacts DIR] [--stress] INPUT

INPUT is a results.json (rendered first with `BIN report INPUT -o DIR/report.html`)
or a report.html (loaded as it is), so the same test runs on the hand-made
fixture and on real `lossless compare` output. The page is opened from a
file:// URL and the test fails when
  - the browser console holds a SEVERE entry (a broken SVG, a blocked request);
  - one of the six charts (svg[data-chart=busbw|latency_cdf|iterations|incast|train-step|tco])
    is missing, or an svg[data-chart] has no `.mark` element of non-zero
    rendered size (getBoundingClientRect);
  - two text labels of one chart overlap, or a label sticks out of its chart;
  - the page is wider than the window (a chart or table that does not fit).
A full-page screenshot goes to DIR/report.png, one of each chart, the matrix
and the operations facts to DIR/report-NAME.png (DIR defaults to ./test-artifacts).
With --stress the same checks run on the input with seven more profiles, one
with a long name and one whose name is markup (DIR/report-stress*.png).

Exit 0 pass, 1 fail, 77 skipped: chromium, chromedriver or selenium missing
(under CI=true a missing tool fails instead).
"""
import argparse
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
CHARTS = ["busbw", "latency_cdf", "iterations", "incast", "train-step", "tco"]
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
// The innermost elements that reach past the window's right edge.
const past = [...document.querySelectorAll('main *')]
    .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1);
const wide = past.filter(e => !past.some(c => c !== e && e.contains(c))).slice(0, 3)
    .map(e => e.tagName.toLowerCase() + (e.getAttribute('class') ? '.' + e.getAttribute('class') : '') +
              ' "' + (e.textContent || '').slice(0, 30) + '"');
return {charts: out, wide: wide, scrollWidth: document.documentElement.scrollWidth,
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
                        f"window: {', '.join(facts['wide']) or 'something'} does not fit")
    return problems


def stress_document(path):
    """The results of `path` with seven more columns, copied from the first
    four: one with a long name and one whose name is markup, as profile files
    from users may hold. The page must still fit, label and escape."""
    with open(path) as f:
        doc = json.load(f)
    names = [p["name"] for p in doc["profiles"]]
    extra = ["extra-1", "extra-2", "extra-3", "extra-4", "extra-5",
             "my-very-long-custom-profile-name-from-a-user-yaml-file",
             "<script>alert('x')</script><img src=x onerror=alert(1)>"]
    for k, name in enumerate(extra):
        src = names[k % len(names)]
        p = copy.deepcopy(doc["profiles"][k % len(names)])
        p["name"] = name
        doc["profiles"].append(p)
        for row in doc["rows"] + doc.get("operations", []):
            if src in row["values"]:
                row["values"][name] = row["values"][src]
            if src in row.get("notes", {}):
                row["notes"][name] = row["notes"][src]
        for series in doc["series"].values():
            if isinstance(series, dict) and src in series:
                series[name] = copy.deepcopy(series[src])
    return doc


def render(lossless, json_path, html_path):
    r = subprocess.run([lossless, "report", json_path, "-o", html_path],
                       capture_output=True, text=True)
    if r.returncode != 0:
        print(f"FAIL: lossless report {json_path} exited {r.returncode}: {r.stderr.strip()}")
        sys.exit(1)


def inspect(driver, html, artifacts, prefix):
    """Loads `html`, checks it and saves its screenshots as PREFIX.png and
    PREFIX-NAME.png. Returns (facts, problems)."""
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    driver.get("file://" + html)
    facts = driver.execute_script(MEASURE_JS)
    problems = check(facts)
    for e in driver.get_log("browser"):
        if e.get("level") == "SEVERE":
            problems.append(f"console SEVERE: {e.get('message')}")
    # Full page: a viewport as tall as the document (the window's own size
    # leaves out its decorations), then one screenshot.
    height = min(int(facts["scrollHeight"]), 16000)
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": WIDTH, "height": height, "deviceScaleFactor": 1,
                            "mobile": False})
    png = os.path.join(artifacts, prefix + ".png")
    if not driver.save_screenshot(png):
        problems.append(f"could not save the screenshot to {png}")
    # Each chart, the matrix and the facts alone too, at full size, for a closer look.
    for svg in driver.find_elements("css selector", "svg[data-chart]"):
        svg.screenshot(os.path.join(artifacts, f"{prefix}-{svg.get_attribute('data-chart')}.png"))
    for sel, name in (("table.matrix", "matrix"), ("section.facts", "operations")):
        for el in driver.find_elements("css selector", sel):
            el.screenshot(os.path.join(artifacts, f"{prefix}-{name}.png"))
    return facts, problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("input", help="results.json (rendered with --lossless) or report.html")
    ap.add_argument("--lossless", help="the lossless binary (needed for a .json input)")
    ap.add_argument("--artifacts", default="test-artifacts",
                    help="folder for report.png (and report.html of a .json input)")
    ap.add_argument("--stress", action="store_true",
                    help="also check the input with seven more profiles, hostile names among "
                         "them (report-stress*.png)")
    args = ap.parse_args()

    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        missing("selenium for Python (Debian package python3-selenium)")
    browser = find_browser()
    driver_path = find_driver()

    os.makedirs(args.artifacts, exist_ok=True)
    is_json = args.input.endswith(".json")
    if is_json and not args.lossless:
        print("FAIL: a .json input needs --lossless BIN to render it")
        return 1
    if args.stress and not is_json:
        print("FAIL: --stress needs a results.json input")
        return 1
    pages = []  # (html, screenshot prefix)
    html = os.path.abspath(args.input)
    if is_json:
        html = os.path.abspath(os.path.join(args.artifacts, "report.html"))
        render(args.lossless, args.input, html)
    if not os.path.exists(html):
        print(f"FAIL: {html}: no such file")
        return 1
    pages.append((html, "report"))
    if args.stress:
        stress_json = os.path.join(args.artifacts, "stress-results.json")
        with open(stress_json, "w") as f:
            json.dump(stress_document(args.input), f)
        stress_html = os.path.abspath(os.path.join(args.artifacts, "report-stress.html"))
        render(args.lossless, stress_json, stress_html)
        pages.append((stress_html, "report-stress"))

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
    failed = False
    try:
        driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=opts)
        driver.set_page_load_timeout(30)
        for html, prefix in pages:
            facts, problems = inspect(driver, html, args.artifacts, prefix)
            print(f"{html}:")
            for c in facts["charts"]:
                print(f"  chart {c['chart']}: {c['marks']} marks, {c['w']:.0f}x{c['h']:.0f} px")
            print(f"  screenshot: {os.path.abspath(os.path.join(args.artifacts, prefix + '.png'))}")
            for p in problems:
                print("FAIL " + p)
            failed = failed or bool(problems)
    finally:
        if driver is not None:
            driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
