/// The report's style sheet: system fonts only (nothing fetched), colours that meet WCAG
/// contrast on their background in both schemes (text ≥ 4.5:1, marks and filled cells ≥ 3:1),
/// a dark scheme by `prefers-color-scheme`, and a print layout on white paper.
enum ReportStyle {
    static let css = """
        :root {
          color-scheme: light dark;
          --bg: #ffffff; --fg: #1f2328; --muted: #57606a; --line: #d0d7de; --panel: #f6f8fa; --lane: #f3f5f8;
          --h0: #ebedf0; --h1: #4c9f63; --h2: #30883f; --h3: #23753a; --h4: #1b5e30; --dot: #ffffff;
          --bar: #0969da; --bar-done: #1a7f37; --target: #bc4c00;
          --k-created: #1a7f37; --k-edited: #8250df; --k-deleted: #cf222e; --k-restored: #1a7f37; --k-progress: #0969da;
          --k-removed: #57606a; --k-tag: #9a6700; --k-reminder: #bc4c00; --k-history: #1f2328; --k-device: #57606a;
          --recovered: #9a6700; --winner: #1f2328;
        }
        @media (prefers-color-scheme: dark) {
          :root {
            --bg: #0d1117; --fg: #e6edf3; --muted: #8b949e; --line: #30363d; --panel: #161b22; --lane: #131922;
            --h0: #1b222c; --h1: #2e7d46; --h2: #3fae5e; --h3: #6fd98a; --h4: #b4f5c3; --dot: #0d1117;
            --bar: #4493f8; --bar-done: #3fb950; --target: #db6d28;
            --k-created: #3fb950; --k-edited: #ab7df8; --k-deleted: #f85149; --k-restored: #3fb950; --k-progress: #4493f8;
            --k-removed: #8b949e; --k-tag: #d29922; --k-reminder: #db6d28; --k-history: #e6edf3; --k-device: #8b949e;
            --recovered: #d29922; --winner: #e6edf3;
          }
        }
        * { box-sizing: border-box; }
        body { margin: 0; background: var(--bg); color: var(--fg);
          font: 14px/1.45 system-ui, -apple-system, "Segoe UI", "Noto Sans", "Noto Sans CJK JP", "Hiragino Sans", sans-serif; }
        main { max-width: 1200px; margin: 0 auto; padding: 24px; }
        h1 { font-size: 26px; margin: 0 0 4px; }
        h2 { font-size: 19px; margin: 0 0 10px; }
        h3 { font-size: 14px; margin: 14px 0 6px; color: var(--muted); font-weight: 600; }
        p { margin: 4px 0; }
        .sub, .muted { color: var(--muted); }
        .note { color: var(--fg); background: var(--panel); border-left: 4px solid var(--target); padding: 6px 10px; margin: 10px 0; }
        .facts { display: flex; gap: 18px; flex-wrap: wrap; margin: 10px 0 22px; color: var(--muted); }
        .facts b { color: var(--fg); }
        section { border: 1px solid var(--line); border-radius: 10px; padding: 16px 18px; margin: 0 0 22px; background: var(--bg); }
        table { border-collapse: collapse; width: 100%; }
        th, td { text-align: start; padding: 4px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
        th { color: var(--muted); font-weight: 600; font-size: 12px; }
        td.num { font-variant-numeric: tabular-nums; text-align: end; white-space: nowrap; }
        .chip { display: inline-block; border: 1px solid var(--line); border-radius: 9px; padding: 0 7px; margin: 0 3px 0 0;
          font-size: 12px; color: var(--muted); }
        .status-done { color: var(--bar-done); font-weight: 600; }
        .status-open { color: var(--muted); }
        .deleted { text-decoration: line-through; color: var(--muted); }
        .charts { display: flex; gap: 24px; flex-wrap: wrap; align-items: flex-start; }
        .legend { display: flex; gap: 14px; flex-wrap: wrap; align-items: center; font-size: 12px; color: var(--muted); margin: 6px 0 0; }
        .legend svg { vertical-align: middle; }
        .events { font-size: 12.5px; }
        .events td:first-child { white-space: nowrap; }
        .flag { display: inline-block; font-size: 11.5px; border-radius: 4px; padding: 0 5px; margin: 0 4px 0 0; border: 1px solid currentColor; }
        .flag-recovered { color: var(--recovered); }
        .flag-winner { color: var(--fg); }
        .flag-lost { color: var(--k-edited); }
        .flag-kept { color: var(--k-deleted); }
        code { font-size: 12px; }
        footer { color: var(--muted); font-size: 12px; margin: 8px 0 24px; }
        svg { display: block; overflow: visible; }
        svg text { fill: var(--muted); font-size: 10.5px; }
        svg .axis { stroke: var(--line); stroke-width: 1; }
        .day { stroke: none; }
        .l0 { fill: var(--h0); } .l1 { fill: var(--h1); } .l2 { fill: var(--h2); } .l3 { fill: var(--h3); } .l4 { fill: var(--h4); }
        .done-dot { fill: var(--dot); pointer-events: none; }
        .bar { fill: var(--bar); } .bar.done { fill: var(--bar-done); }
        .tick-done { stroke: var(--bar-done); stroke-width: 2; fill: none; }
        .target-line { stroke: var(--target); stroke-width: 2; stroke-dasharray: 6 4; }
        svg text.target-label { fill: var(--target); font-weight: 600; }
        .lane-bg { fill: var(--lane); }
        svg text.lane-name { fill: var(--fg); font-size: 12px; font-weight: 600; }
        .k-created { fill: var(--k-created); stroke: var(--k-created); } .k-edited { fill: var(--k-edited); stroke: var(--k-edited); }
        .k-deleted { fill: var(--k-deleted); stroke: var(--k-deleted); } .k-restored { fill: var(--k-restored); stroke: var(--k-restored); }
        .k-progress { fill: var(--k-progress); stroke: var(--k-progress); } .k-removed { fill: var(--k-removed); stroke: var(--k-removed); }
        .k-tag { fill: var(--k-tag); stroke: var(--k-tag); } .k-reminder { fill: var(--k-reminder); stroke: var(--k-reminder); }
        .k-history { fill: var(--k-history); stroke: var(--k-history); } .k-device { fill: var(--k-device); stroke: var(--k-device); }
        .mark .shape { stroke-width: 0; }
        .mark .stroke { fill: none; stroke-width: 3; stroke-linecap: round; }
        .mark.lost .shape { fill: var(--bg); stroke-width: 2; }
        .winner-ring { fill: none; stroke: var(--winner); stroke-width: 2; }
        .kept-box { fill: none; stroke: var(--k-deleted); stroke-width: 1.5; stroke-dasharray: 3 2; }
        .recovered { fill: var(--recovered); stroke: var(--fg); stroke-width: 0.75; }
        svg text.recovered-count { fill: var(--recovered); font-weight: 700; }
        .link { stroke: var(--k-edited); stroke-width: 2; fill: none; }
        .link.deletion { stroke: var(--k-deleted); stroke-dasharray: 5 3; }
        @media print {
          :root { color-scheme: light;
            --bg: #ffffff; --fg: #000000; --muted: #444c56; --line: #b8c0c8; --panel: #f3f4f6; --lane: #f3f5f8;
            --h0: #ebedf0; --h1: #4c9f63; --h2: #30883f; --h3: #23753a; --h4: #1b5e30; --dot: #ffffff;
            --bar: #0969da; --bar-done: #1a7f37; --target: #bc4c00;
            --k-created: #1a7f37; --k-edited: #8250df; --k-deleted: #cf222e; --k-restored: #1a7f37; --k-progress: #0969da;
            --k-removed: #57606a; --k-tag: #9a6700; --k-reminder: #bc4c00; --k-history: #000000; --k-device: #57606a;
            --recovered: #9a6700; --winner: #000000; }
          @page { margin: 14mm; }
          body { font-size: 11px; -webkit-print-color-adjust: exact; print-color-adjust: exact; }
          main { max-width: none; padding: 0; }
          section { break-inside: avoid-page; border-color: #b8c0c8; }
          .events tr { break-inside: avoid; }
          .charts { display: block; }
        }
        """
}
