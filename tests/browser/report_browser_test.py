#!/usr/bin/env python3
"""Loads report.html of a generated capture in headless Chromium (Debian package) and checks it.

usage: report_browser_test.py ASCPROF_MPI WORK_DIR SCREENSHOT_PNG [--chromium PATH] [--ranks N] [--steps N]

1. `ascprof-mpi synth` writes a capture into WORK_DIR/cap, an instrumented build with in-kernel
   MoE traces (--moe-trace skill) whose rank 1 has a slow expert (moe_slow_expert:1); one kernel
   of one rank is renamed to `<img src=x onerror=alert(1)>`, and that rank's traced FusedDeepMoe
   row to `aclnnFusedDeepMoe_<img src=x onerror=alert(1)>` (still an instrumented kernel, so its
   trace attaches and the name reaches the MoE section and lanes); `ascprof-mpi analyze` analyses
   it into WORK_DIR/out, report stage included (report.html).
2. Chromium is driven over the DevTools protocol on a pipe (--remote-debugging-pipe: commands on
   fd 3, replies on fd 4, NUL-terminated JSON). Checks: no console error, no uncaught exception, no
   JavaScript dialog (a dialog means the injected name ran as markup), no <img> element, the timeline
   canvas drew, a wheel zoom changes the view, a click on the inspector's second step changes the
   shown step, the operator deep dive view lists rows and a click on one opens its card; the
   In-kernel MoE section lists 4 attached calls (the hostile name as text), a click on rank 1's
   "open lanes" adds its 72 cores as lanes to the timeline (the canvas's data-lanes, and more
   coloured pixels than with the lanes closed in the same view), a hover on one shows its phase,
   index, core and duration, a click on the call's head row closes them and one on the traced
   kernel in the timeline opens them again, "Close all lanes" removes them, a click on an in-kernel
   finding opens them again, and the in-kernel findings name rank 1 only. When the
   analysis wrote no operator_deep_dive.json (a build without the deep dive), hand-made files
   (schema operator_deep_dive/v1, a row named like the injected kernel) are written into the root's
   output folder and the report stage is rerun (--from-stage report) before the page is loaded.
   A screenshot goes to SCREENSHOT_PNG.

Exit status: 0 pass, 1 fail, 77 skip (no chromium). Python standard library only.
"""
import argparse
import base64
import fcntl
import json
import os
import pathlib
import select
import shutil
import subprocess
import sys
import time

# saturated pixels of the timeline: lane colours and idle gaps, not pale backgrounds or text
PIXELS = """(() => {
        const c = document.getElementById('timeline');
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0;
        for (let i = 0; i < d.length; i += 4) {
          const mx = Math.max(d[i], d[i + 1], d[i + 2]), mn = Math.min(d[i], d[i + 1], d[i + 2]);
          if (mx - mn > 60) n++;
        }
        return n; })()"""
HOSTILE = "<img src=x onerror=alert(1)>"
MOE_KERNEL = "aclnnFusedDeepMoe_" + HOSTILE  # still matches the instrumented kernel names
MOE_SLOW_RANK_NUMBER = "1"
MOE_SLOW_RANK = "rank" + MOE_SLOW_RANK_NUMBER  # the tool names profiler rank N "rankN"


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def run(cmd, env=None, timeout=600):
    print("+ " + " ".join(str(c) for c in cmd), file=sys.stderr)
    p = subprocess.run([str(c) for c in cmd], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=timeout)
    if p.returncode != 0:
        fail("%s exited %d\n%s\n%s" % (cmd[0], p.returncode, p.stdout[-4000:], p.stderr[-4000:]))
    return p.stdout


def poison_kernel_name(capture):
    """Renames the kernel of data row 1 of the first rank folder's kernel_details.csv, and the
    FusedDeepMoe row its in-kernel trace belongs to (trace_call<K>.json: the Kth such row)."""
    folders = sorted(p for p in capture.iterdir() if p.is_dir())
    csv = folders[0] / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    lines = csv.read_text(encoding="utf-8").split("\n")
    # Name is the 6th column; the 5 before it never hold commas.
    cells = lines[2].split(",", 6)
    cells[5] = HOSTILE
    lines[2] = ",".join(cells)
    traces = sorted((folders[0] / "moe_trace").glob("trace_call*.json"))
    if not traces:
        fail("the capture has no in-kernel MoE trace in %s" % folders[0])
    call = int(traces[0].stem[len("trace_call"):])
    names = [(i, line.split(",", 6)) for i, line in enumerate(lines) if i > 0]
    moe_rows = [i for i, c in names if len(c) > 5 and "FusedDeepMoe" in c[5]]
    if call >= len(moe_rows):
        fail("%s names call %d but the rank has %d FusedDeepMoe rows" % (traces[0].name, call, len(moe_rows)))
    cells = lines[moe_rows[call]].split(",", 6)
    cells[5] = MOE_KERNEL
    lines[moe_rows[call]] = ",".join(cells)
    csv.write_text("\n".join(lines), encoding="utf-8")


DEEP_DIVE_SUGGESTION = "Vectorise the tail handling"


def write_deep_dive(root_out):
    """Hand-made operator_deep_dive.csv/json (two root rows, one rank row, one host API entry)."""
    def row(rid, scope, rank, hot, name, classes, severity, details):
        return {"deep_dive_id": rid, "scope": scope, "rank_id": rank, "hot_rank": hot, "name": name,
                "task_type": "AI_VECTOR_CORE", "op_type": "Cast", "shape_class": "shape_00ab12cd34ef5678",
                "input_shapes": "4096,7168", "input_dtypes": "DT_BF16", "rank_count": 1 if scope == "rank" else 2,
                "call_count": 1200, "total_us": 614760.5, "avg_us": 512.3, "kernel_time_share": 0.4231,
                "cumulative_share": 0.4231, "aiv_scalar_ratio": 0.7, "bound_family": "scalar", "efficiency": None,
                "classifications": classes, "severity": severity,
                "verdict": "Scalar heavy: address arithmetic -> " + DEEP_DIVE_SUGGESTION if classes else "no pathology found",
                "evidence_ids": ["evt_0_1"], "gaps": ["aiv_icache_miss_rate not collected"] if classes else [],
                "details": details}
    detail = [{"id": "vector_scalar_heavy", "title": "Vector kernel dominated by scalar work", "severity": "high",
               "facts": ["aiv_scalar_ratio = 0.700 (>= 0.5)"], "inference": "The vector unit idles.",
               "cause": "Scalar address arithmetic", "suggestion": DEEP_DIVE_SUGGESTION}]
    rows = [row("odd_00000000000000a1", "root", "", 1, HOSTILE, ["vector_scalar_heavy"], "high", detail),
            row("odd_00000000000000b2", "root", "", 2, "aclnnAdd_AddAiCore_Add", [], "", []),
            row("odd_00000000000000c3", "rank", "rank0", 1, HOSTILE, ["vector_scalar_heavy"], "high", detail)]
    doc = {"schema": "operator_deep_dive/v1", "root": str(root_out),
           "chip": {"name": "Ascend910B", "assumed": True, "source": "test", "cube_cores": 20, "vector_cores": 40,
                    "cube_tflops": 313.0, "hbm_gbps": 1600.0},
           "selection": {"coverage": 0.8, "min_operators": 20, "max_operators": 50}, "rows": rows,
           "host_api": [{"rank_id": "rank0", "level": "runtime", "api": "StreamSynchronize", "time_us": 90660.49,
                         "count": 7, "avg_us": 12951.5, "share_of_span": 0.12, "classification": "sync_heavy"}]}
    (root_out / "operator_deep_dive.json").write_text(json.dumps(doc), encoding="utf-8")
    cols = [k for k in rows[0] if k != "details"]

    def cell(v):
        v = ";".join(v) if isinstance(v, list) else ("" if v is None else str(v))
        return '"' + v.replace('"', '""') + '"' if any(c in v for c in ',"\n') else v
    lines = [",".join(cols)] + [",".join(cell(r[c]) for c in cols) for r in rows]
    (root_out / "operator_deep_dive.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")


class DialogOpened(Exception):
    pass


class Cdp:
    """DevTools protocol over the pipe pair of a Chromium started with --remote-debugging-pipe."""

    def __init__(self, proc, to_browser, from_browser):
        self.proc, self.out, self.inp = proc, to_browser, from_browser
        self.next_id, self.buf, self.events = 0, b"", []

    def _read_message(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no message from chromium")
            ready, _, _ = select.select([self.inp], [], [], left)
            if ready:
                chunk = os.read(self.inp, 1 << 20)
                if not chunk:
                    raise EOFError("chromium closed the pipe (exit %s)" % self.proc.poll())
                self.buf += chunk
        msg, _, self.buf = self.buf.partition(b"\0")
        return json.loads(msg)

    def send(self, method, params=None, session=None, timeout=30):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.out, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            m = self._read_message(deadline)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            self._note(m)

    def _note(self, m):
        self.events.append(m)
        # an open alert() blocks the page, so no reply would come: the XSS fired, stop here
        if m.get("method") == "Page.javascriptDialogOpening":
            raise DialogOpened(m.get("params", {}).get("message", ""))

    def pump(self, seconds):
        """Collects events for `seconds`."""
        deadline = time.monotonic() + seconds
        try:
            while True:
                self._note(self._read_message(deadline))
        except TimeoutError:
            pass


def evaluate(cdp, session, expr):
    r = cdp.send("Runtime.evaluate", {"expression": expr, "returnByValue": True, "awaitPromise": True}, session)
    if "exceptionDetails" in r:
        fail("evaluate %r threw: %s" % (expr[:60], json.dumps(r["exceptionDetails"])[:800]))
    return r["result"].get("value")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ascprof")
    ap.add_argument("work")
    ap.add_argument("screenshot")
    ap.add_argument("--chromium", default=shutil.which("chromium") or shutil.which("chromium-browser"))
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--steps", type=int, default=3)
    a = ap.parse_args()
    if not a.chromium:
        print("SKIP: chromium not installed", file=sys.stderr)
        return 77

    work = pathlib.Path(a.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    for sub in ("cap", "out", "profile"):
        shutil.rmtree(work / sub, ignore_errors=True)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    run([a.ascprof, "synth", "--scenario", "moe_mla_decode", "-o", work / "cap", "--ranks", a.ranks,
         "--steps", a.steps, "--fault", "idle_bubble:%d" % (a.ranks // 2), "--moe-trace", "skill",
         "--fault", "moe_slow_expert:" + MOE_SLOW_RANK_NUMBER], env)
    poison_kernel_name(work / "cap")
    result = json.loads(run([a.ascprof, "analyze", work / "cap", "-o", work / "out", "--progress", "none"], env))
    root_out = pathlib.Path(result["roots"][0]["out_dir"])
    if not root_out.is_absolute():
        root_out = pathlib.Path.cwd() / root_out
    html = root_out / "report" / "report.html"
    injected = not (root_out / "operator_deep_dive.json").is_file()
    if injected:
        write_deep_dive(root_out)
        run([a.ascprof, "analyze", work / "cap", "-o", work / "out", "--from-stage", "report", "--progress", "none"], env)
    if not html.is_file():
        fail("no report.html at %s" % html)
    print("report.html: %d bytes" % html.stat().st_size, file=sys.stderr)

    # fds 3 and 4 of the browser: high duplicates first so dup2 cannot clobber one with the other
    cmd_r, cmd_w = os.pipe()
    res_r, res_w = os.pipe()
    hi_cmd = fcntl.fcntl(cmd_r, fcntl.F_DUPFD_CLOEXEC, 10)
    hi_res = fcntl.fcntl(res_w, fcntl.F_DUPFD_CLOEXEC, 10)

    def child_fds():  # runs in the child before exec; dup2'd fds are inherited
        os.dup2(hi_cmd, 3)
        os.dup2(hi_res, 4)

    proc = subprocess.Popen(
        [a.chromium, "--headless", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu",
         "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--mute-audio",
         "--user-data-dir=" + str(work / "profile"), "--window-size=1400,1000", "about:blank"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(work / "chromium.log", "wb"),
        close_fds=False, preexec_fn=child_fds)
    for fd in (cmd_r, res_w, hi_cmd, hi_res):
        os.close(fd)
    cdp = Cdp(proc, cmd_w, res_r)
    try:
        return check_page(cdp, html, pathlib.Path(a.screenshot), injected)
    except DialogOpened as e:
        fail("a JavaScript dialog opened (injected markup ran): %s" % e)
    finally:
        try:
            cdp.send("Browser.close", timeout=5)
        except Exception:
            pass
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def click(cdp, session, xy):
    for kind in ("mousePressed", "mouseReleased"):
        cdp.send("Input.dispatchMouseEvent", {"type": kind, "x": xy[0], "y": xy[1], "button": "left", "clickCount": 1}, session)


def center_of(cdp, session, selector_expr):
    """Scrolls the element `selector_expr` evaluates to into view; its centre, or None."""
    return evaluate(cdp, session, "(() => { const e = %s; if (!e) return null; e.scrollIntoView({block: 'center'}); "
                                  "const r = e.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()"
                    % selector_expr)


def check_moe(cdp, session, checks):
    """The In-kernel MoE section and the nested lanes it opens in the timeline (real mouse input)."""
    lanes = "Number(document.getElementById('timeline').dataset.lanes)"
    is_open = "document.getElementById('timeline').dataset.moeOpen"
    status = "document.getElementById('tl-status').textContent"
    checks["moe_attached_rows"] = evaluate(cdp, session, "document.querySelectorAll('#moe-calls tr[data-status=\"attached\"]').length")
    checks["moe_name_as_text"] = evaluate(cdp, session, "document.getElementById('moe-calls').textContent.includes(%s)"
                                          % json.dumps(MOE_KERNEL))
    checks["moe_lanes_closed"] = evaluate(cdp, session, lanes)
    box = center_of(cdp, session, "Array.from(document.querySelectorAll('#moe-calls tr[data-status=\"attached\"]'))"
                                  ".map((r) => r.cells[0].textContent === %s && r.querySelector('button.moe-open'))"
                                  ".find((b) => b)" % json.dumps(MOE_SLOW_RANK))
    if box is None:
        fail("the MoE section has no 'open lanes' button for rank %s" % MOE_SLOW_RANK)
    click(cdp, session, box)
    cdp.pump(0.5)
    checks["moe_lanes_open"] = evaluate(cdp, session, lanes)
    checks["moe_open_after_button"] = evaluate(cdp, session, is_open)
    checks["moe_view_open"] = evaluate(cdp, session, status)
    checks["moe_pixels_open"] = evaluate(cdp, session, PIXELS)
    # a hover on the first core row, inside the kernel (the view is zoomed to it)
    at = evaluate(cdp, session, "(() => { const c = document.getElementById('timeline'), y = Number(c.dataset.moeRowY); "
                                "if (!c.dataset.moeRowY) return null; window.scrollTo(0, window.scrollY + c.getBoundingClientRect().top + y - 300); "
                                "const r = c.getBoundingClientRect(); return [r.left + r.width * 0.6, r.top + y]; })()")
    if at is not None:
        cdp.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": at[0], "y": at[1]}, session)
        cdp.pump(0.3)
    tip = "(() => { const t = document.getElementById('tl-tip'); return t.hidden ? '' : t.textContent; })()"
    checks["moe_tooltip"] = evaluate(cdp, session, tip)
    if at is not None:
        # a click on the call's head row (above its first core row) closes it; a click on the traced
        # kernel itself (found above by its tooltip) opens it again
        click(cdp, session, [at[0], at[1] - 9])
        cdp.pump(0.4)
        checks["moe_open_after_head_click"] = evaluate(cdp, session, is_open)
        checks["moe_kernel_tooltip"] = ""
        for dy in range(16, 120, 4):
            cdp.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": at[0], "y": at[1] - dy}, session)
            cdp.pump(0.05)
            text = evaluate(cdp, session, tip)
            if "FusedDeepMoe" in text and "%s " % MOE_SLOW_RANK in text:
                checks["moe_kernel_tooltip"] = text
                click(cdp, session, [at[0], at[1] - dy])
                cdp.pump(0.4)
                break
        checks["moe_open_after_kernel_click"] = evaluate(cdp, session, is_open)
    # "Close all lanes": the same view without them
    click(cdp, session, center_of(cdp, session, "document.getElementById('moe-close')"))
    cdp.pump(0.4)
    checks["moe_lanes_closed_again"] = evaluate(cdp, session, lanes)
    checks["moe_pixels_closed"] = evaluate(cdp, session, PIXELS)
    # the in-kernel findings name the slow rank; a click on one opens the lanes of the kernel it cites
    checks["moe_findings"] = evaluate(cdp, session, "Array.from(document.querySelectorAll('#moe-findings li')).map((li) => li.textContent)")
    box = center_of(cdp, session, "document.querySelector('#moe-findings li')")
    if box is not None:
        click(cdp, session, box)
        cdp.pump(0.5)
    checks["moe_open_after_finding"] = evaluate(cdp, session, is_open)


def moe_errors(checks):
    errors = []
    if checks["moe_attached_rows"] != 4:
        errors.append("the MoE section lists %s attached calls, not 4" % checks["moe_attached_rows"])
    if checks["moe_name_as_text"] is not True:
        errors.append("the MoE calls table does not show the hostile kernel name as text")
    closed, opened = checks["moe_lanes_closed"] or 0, checks["moe_lanes_open"] or 0
    if opened < closed + 72 or checks["moe_open_after_button"] != "1":
        errors.append("opening rank %s's lanes did not add its 72 cores: lanes %s -> %s, open %r"
                      % (MOE_SLOW_RANK, closed, opened, checks["moe_open_after_button"]))
    if (checks["moe_pixels_open"] or 0) < (checks["moe_pixels_closed"] or 0) + 20000:
        errors.append("the opened lanes drew too few pixels: %s open, %s closed in the same view"
                      % (checks["moe_pixels_open"], checks["moe_pixels_closed"]))
    tip = checks["moe_tooltip"] or ""
    if not all(w in tip for w in (" index ", " core ", "duration ")):
        errors.append("hovering a nested lane shows no phase tooltip: %r" % tip)
    if checks.get("moe_open_after_head_click") != "0":
        errors.append("a click on the opened call's head row did not close it (%r)" % checks.get("moe_open_after_head_click"))
    if checks.get("moe_open_after_kernel_click") != "1":
        errors.append("a click on rank %s's traced kernel did not open its lanes (%r, kernel tooltip %r)"
                      % (MOE_SLOW_RANK, checks.get("moe_open_after_kernel_click"), checks.get("moe_kernel_tooltip")))
    if checks["moe_lanes_closed_again"] != closed:
        errors.append("'Close all lanes' left %s lanes (%s before opening)" % (checks["moe_lanes_closed_again"], closed))
    found = checks["moe_findings"] or []
    if not found or not all(("suspected ranks %s ·" % MOE_SLOW_RANK) in f for f in found):
        errors.append("the in-kernel findings do not name rank %s alone: %r" % (MOE_SLOW_RANK, found))
    if checks["moe_open_after_finding"] != "1":
        errors.append("a click on an in-kernel finding did not open its lanes (%r)" % checks["moe_open_after_finding"])
    return errors


def check_page(cdp, html, screenshot, injected):
    targets = cdp.send("Target.getTargets", timeout=60)["targetInfos"]
    page = next(t for t in targets if t["type"] == "page")
    session = cdp.send("Target.attachToTarget", {"targetId": page["targetId"], "flatten": True})["sessionId"]
    for domain in ("Page", "Runtime", "Log"):
        cdp.send(domain + ".enable", session=session)
    cdp.send("Emulation.setDeviceMetricsOverride",
             {"width": 1400, "height": 1000, "deviceScaleFactor": 1, "mobile": False}, session)
    cdp.send("Page.navigate", {"url": html.as_uri()}, session)
    deadline = time.monotonic() + 60
    while evaluate(cdp, session, "document.readyState === 'complete' && document.body && "
                                 "document.body.dataset.ready === '1'") is not True:
        if time.monotonic() > deadline:
            fail("the page did not finish its script (body[data-ready] never set)")
        cdp.pump(0.2)

    checks = {}
    checks["pixels"] = evaluate(cdp, session, PIXELS)
    checks["draw_ms_full_view"] = evaluate(cdp, session, "Number(document.getElementById('timeline').dataset.drawMs)")
    checks["img_elements"] = evaluate(cdp, session, "document.getElementsByTagName('img').length")
    checks["hostile_in_data"] = evaluate(
        cdp, session, "JSON.parse(document.getElementById('data').textContent).strings.includes(%s)" % json.dumps(HOSTILE))

    # wheel zoom at the middle of the timeline
    rect = evaluate(cdp, session, "(() => { const c = document.getElementById('timeline'); c.scrollIntoView(); "
                                  "const r = c.getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()")
    before = evaluate(cdp, session, "document.getElementById('tl-status').textContent")
    x, y = rect[0] + rect[2] * 0.6, rect[1] + min(rect[3] / 2, 60)
    cdp.send("Input.dispatchMouseEvent", {"type": "mouseWheel", "x": x, "y": y, "deltaX": 0, "deltaY": -600}, session)
    cdp.pump(0.5)
    after = evaluate(cdp, session, "document.getElementById('tl-status').textContent")
    checks["zoom_changed_view"] = before != after
    checks["timeline_status"] = after
    # zoomed in until a pixel is finer than a histogram bin: the embedded kernels are drawn
    for _ in range(4):
        if "kernels in view" in evaluate(cdp, session, "document.getElementById('tl-status').textContent"):
            break
        cdp.send("Input.dispatchMouseEvent", {"type": "mouseWheel", "x": x, "y": y, "deltaX": 0, "deltaY": -800}, session)
        cdp.pump(0.4)
    after = evaluate(cdp, session, "document.getElementById('tl-status').textContent")
    checks["kernel_view_status"] = after
    checks["kernel_pixels"] = evaluate(cdp, session, PIXELS)
    # drag pan
    cdp.send("Input.dispatchMouseEvent", {"type": "mousePressed", "x": x, "y": y, "button": "left", "clickCount": 1}, session)
    cdp.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x - 200, "y": y, "button": "left"}, session)
    cdp.send("Input.dispatchMouseEvent", {"type": "mouseReleased", "x": x - 200, "y": y, "button": "left", "clickCount": 1}, session)
    cdp.pump(0.3)
    checks["pan_changed_view"] = evaluate(cdp, session, "document.getElementById('tl-status').textContent") != after

    # a real mouse click on the inspector's second step button
    title0 = evaluate(cdp, session, "document.getElementById('inspector-title').textContent")
    box = evaluate(cdp, session, "(() => { const b = document.querySelectorAll('#step-list button')[1]; if (!b) return null; "
                                 "b.scrollIntoView({block: 'center'}); const r = b.getBoundingClientRect(); "
                                 "return [r.left + r.width / 2, r.top + r.height / 2]; })()")
    if box is None:
        fail("the inspector lists fewer than two steps")
    for kind in ("mousePressed", "mouseReleased"):
        cdp.send("Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1], "button": "left", "clickCount": 1}, session)
    cdp.pump(0.3)
    title1 = evaluate(cdp, session, "document.getElementById('inspector-title').textContent")
    checks["step_title_before"], checks["step_title_after"] = title0, title1
    checks["cards_after_click"] = evaluate(cdp, session, "document.querySelectorAll('#op-cards .card').length")
    checks["draw_ms_zoomed"] = evaluate(cdp, session, "Number(document.getElementById('timeline').dataset.drawMs)")
    # operator deep dive: rows listed; a real click on the first classified row (else the first) opens its card
    checks["deep_dive_rows"] = evaluate(cdp, session, "document.querySelectorAll('#dd-table tr.clickable').length")
    box = evaluate(cdp, session, "(() => { const rows = Array.from(document.querySelectorAll('#dd-table tr.clickable')); "
                                 "const r = rows.find((x) => x.querySelector('.sev')) || rows[0]; if (!r) return null; "
                                 "r.scrollIntoView({block: 'center'}); const b = r.getBoundingClientRect(); "
                                 "return [b.left + Math.min(b.width / 2, 200), b.top + b.height / 2]; })()")
    if box is not None:
        for kind in ("mousePressed", "mouseReleased"):
            cdp.send("Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1], "button": "left", "clickCount": 1}, session)
        cdp.pump(0.3)
    checks["deep_dive_cards"] = evaluate(cdp, session, "document.querySelectorAll('#dd-card .card').length")
    checks["deep_dive_card_text"] = evaluate(cdp, session, "(document.querySelector('#dd-card .card') || {}).textContent || ''")[:400]
    checks["deep_dive_injected"] = injected
    # whole capture again, now that the script is warm: the steady cost of the zoomed-out view
    evaluate(cdp, session, "document.getElementById('tl-reset').click()")
    cdp.pump(0.3)
    checks["draw_ms_full_view_warm"] = evaluate(cdp, session, "Number(document.getElementById('timeline').dataset.drawMs)")
    check_moe(cdp, session, checks)

    # Full-page screenshot as the artifact. The viewport is made as tall as the page first and
    # the page given time to redraw: capturing beyond the viewport resizes it during the capture.
    cdp.send("Runtime.evaluate", {"expression": "window.scrollTo(0, 0)"}, session)
    metrics = cdp.send("Page.getLayoutMetrics", session=session)
    height = int(min((metrics.get("cssContentSize") or metrics["contentSize"])["height"], 6000))
    cdp.send("Emulation.setDeviceMetricsOverride",
             {"width": 1400, "height": height, "deviceScaleFactor": 1, "mobile": False}, session)
    cdp.pump(0.8)
    shot = cdp.send("Page.captureScreenshot", {"format": "png"}, session, timeout=60)
    screenshot.parent.mkdir(parents=True, exist_ok=True)
    screenshot.write_bytes(base64.b64decode(shot["data"]))
    # and the timeline alone beside it (<name>-timeline.png)
    r = evaluate(cdp, session, "(() => { const r = document.getElementById('tl').getBoundingClientRect(); "
                               "return [r.left + window.scrollX, r.top + window.scrollY, r.width, r.height]; })()")
    shot = cdp.send("Page.captureScreenshot", {"format": "png",
                                               "clip": {"x": r[0], "y": r[1], "width": r[2], "height": r[3], "scale": 1}},
                    session, timeout=60)
    screenshot.with_name(screenshot.stem + "-timeline.png").write_bytes(base64.b64decode(shot["data"]))
    cdp.pump(0.3)

    errors = []
    for m in cdp.events:
        method, p = m.get("method"), m.get("params", {})
        if method == "Runtime.exceptionThrown":
            errors.append("uncaught exception: " + json.dumps(p.get("exceptionDetails", {}))[:600])
        elif method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            errors.append("console.%s: %s" % (p["type"], json.dumps(p.get("args", []))[:600]))
        elif method == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            errors.append("log error: " + p["entry"].get("text", "")[:600])
        elif method == "Page.javascriptDialogOpening":
            errors.append("a JavaScript dialog opened (injected markup ran): " + p.get("message", ""))
    print(json.dumps(checks, indent=1), file=sys.stderr)
    print("screenshot: %s" % screenshot, file=sys.stderr)
    if checks["pixels"] is None or checks["pixels"] < 2000:
        errors.append("the timeline canvas drew only %s coloured pixels" % checks["pixels"])
    if checks["img_elements"] != 0:
        errors.append("the page has %s <img> elements" % checks["img_elements"])
    if checks["hostile_in_data"] is not True:
        errors.append("the injected kernel name is not in the page data")
    if not checks["zoom_changed_view"]:
        errors.append("a wheel event on the timeline did not change the view")
    if "kernels in view" not in checks["kernel_view_status"] or (checks["kernel_pixels"] or 0) < 2000:
        errors.append("zoomed in, the timeline did not draw kernels: %s, %s pixels"
                      % (checks["kernel_view_status"], checks["kernel_pixels"]))
    if not checks["pan_changed_view"]:
        errors.append("dragging the timeline did not change the view")
    if title0 == title1 or " 2 of " not in (title1 or ""):
        errors.append("clicking the second step did not show it: %r -> %r" % (title0, title1))
    if not checks["deep_dive_rows"]:
        errors.append("the operator deep dive view lists no rows")
    elif checks["deep_dive_cards"] != 1:
        errors.append("clicking a deep dive row did not open its card (%s cards)" % checks["deep_dive_cards"])
    elif injected and (DEEP_DIVE_SUGGESTION not in checks["deep_dive_card_text"] or HOSTILE not in checks["deep_dive_card_text"]):
        errors.append("the deep dive card lacks the row's name or suggestion: %r" % checks["deep_dive_card_text"])
    errors += moe_errors(checks)
    if errors:
        fail("\n".join(errors))
    print("PASS", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
