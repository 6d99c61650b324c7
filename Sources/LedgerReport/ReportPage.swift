import Foundation
import GoalLedger

extension LedgerReport {
    /// The report as one self-contained HTML document: inline CSS and SVG, no script, nothing
    /// fetched. It lays out the values gathered by `make`; it computes none of its own.
    package var html: String { html(choosingGoals: "") }

    /// `html`, with `choosingGoals` after the note that not every goal is drawn in full: the
    /// caller's hint, in the page's language (`labels.language`), on how to choose the goals.
    package func html(choosingGoals: String) -> String {
        var page = ReportPage(report: self, choosingGoals: choosingGoals)
        page.write()
        return page.w.output
    }
}

/// Lays a `LedgerReport` out as HTML.
struct ReportPage {
    let report: LedgerReport
    let l: ReportLabels
    let zone: TimeZone
    /// The caller's hint in the note on goals not drawn in full.
    let choosingGoals: String
    var w = HTMLWriter()

    init(report: LedgerReport, choosingGoals: String) {
        self.report = report
        self.choosingGoals = choosingGoals
        l = report.labels
        zone = report.calendar.timeZone
    }

    mutating func write() {
        w.raw("<!DOCTYPE html>\n")
        w.open("html", ["lang": l.language])
        w.raw("<head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">")
        w.raw("<meta name=\"color-scheme\" content=\"light dark\">")
        w.element("title", text: l.title + " — " + report.device.name)
        w.raw("<style>\n" + ReportStyle.css + "\n</style></head>\n<body><main>\n")
        header()
        overview()
        if report.detailsOmitted > 0 && !report.details.isEmpty {
            note(
                ReportLabels.format(
                    l.goalsCapped,
                    [
                        "shown": count(report.details.count), "total": count(report.details.count + report.detailsOmitted),
                        "choose": choosingGoals,
                    ]))
        }
        for (i, d) in report.details.enumerated() { goal(d, index: i) }
        reminders()
        w.element("footer", text: l.footer)
        w.raw("</main></body></html>\n")
    }

    // MARK: Pieces

    mutating func header() {
        w.open("header")
        w.element("h1", text: l.title)
        let settings = report.device.settings
        w.element(
            "p", ["class": "sub"],
            text: ReportLabels.format(
                l.subtitle,
                [
                    "device": report.device.name, "zone": settings.timeZone, "weekday": l.weekday(settings.firstWeekday),
                    "now": local(report.now),
                ]))
        w.raw("<p class=\"facts\">")
        fact(count(report.overview.count + report.overviewOmitted), l.goalsCount)
        fact(count(Int(report.events)), l.eventsCount)
        fact(String(report.schema), "schema")
        fact(report.ledger.uuidString, "ledger")
        w.raw("</p>")
        w.close("header")
        w.raw("\n")
    }

    mutating func fact(_ value: String, _ label: String) {
        w.open("span")
        w.element("b", text: value)
        w.text(" " + label)
        w.close("span")
    }

    mutating func note(_ text: String) { w.element("p", ["class": "note"], text: text) }

    mutating func overview() {
        w.open("section", ["id": "overview"])
        w.element("h2", text: l.overview)
        if report.overview.isEmpty {
            w.element("p", text: l.noGoals)
            w.close("section")
            return
        }
        if report.overviewOmitted > 0 {
            note(
                ReportLabels.format(
                    l.overviewCapped,
                    ["shown": count(report.overview.count), "total": count(report.overview.count + report.overviewOmitted)]))
        }
        w.raw("<table class=\"overview\"><thead><tr>")
        for h in [l.goal, l.cadence, l.period, l.value, l.target, l.streak, l.best] { w.element("th", text: h) }
        w.raw("</tr></thead><tbody>\n")
        let inFull = Set(report.details.map(\.goal.id))
        for (i, s) in report.overview.enumerated() {
            let g = s.goal
            w.open("tr", ["data-goal": g.id.uuidString])
            w.open("td")
            if inFull.contains(g.id) {
                w.open("a", ["href": "#goal-\(i)", "class": g.isDeleted ? "deleted" : nil])
            } else {
                w.open("span", ["class": g.isDeleted ? "deleted" : nil])
            }
            w.element("bdi", text: user(g.title?.value ?? ""))
            w.close(inFull.contains(g.id) ? "a" : "span")
            if g.isDeleted { w.text(" (" + l.deleted + ")") }
            for t in g.tags {
                w.text(" ")
                w.open("span", ["class": "chip"])
                w.element("bdi", text: user(t))
                w.close("span")
            }
            w.close("td")
            w.element("td", text: l.cadence(g.cadence?.value ?? .once))
            w.element("td", text: period(s.view.period))
            w.open("td", ["class": "num"])
            status(s.goal, s.view)
            w.close("td")
            w.element("td", ["class": "num"], text: target(g))
            w.element("td", ["class": "num"], text: s.view.streak.map { String($0.current) } ?? "—")
            w.element("td", ["class": "num"], text: s.view.streak.map { String($0.best) } ?? "—")
            w.close("tr")
            w.raw("\n")
        }
        w.raw("</tbody></table>")
        w.close("section")
        w.raw("\n")
    }

    /// The period value with a symbol for done (✓) or not (○), so that the status does not
    /// depend on colour.
    mutating func status(_ g: GoalState, _ v: GoalView) {
        let done = v.completed
        w.open("span", ["class": done ? "status-done" : "status-open"])
        var s = done ? "✓ " : "○ "
        if g.kind == .measurable {
            s += number(v.value ?? .zero) + ((g.unit?.value ?? nil).map { " " + user($0) } ?? "")
        } else {
            s += done ? l.done : l.notDone
        }
        w.element("bdi", text: s)
        w.close("span")
    }

    mutating func goal(_ d: GoalDetail, index: Int) {
        let g = d.goal
        w.open("section", ["class": "goal", "id": "goal-\(index)", "data-goal": g.id.uuidString])
        w.open("h2", ["class": g.isDeleted ? "deleted" : nil])
        w.element("bdi", text: user(g.title?.value ?? ""))
        w.close("h2")
        w.open("p", ["class": "sub"])
        let targetText = g.kind == .measurable ? " · " + l.target + " " + target(g) : ""
        w.text(l.cadence(g.cadence?.value ?? .once) + targetText + " · " + l.period + " " + period(d.view.period) + " · ")
        status(g, d.view)
        if let s = d.view.streak { w.text(" · " + l.streak + " " + String(s.current) + " · " + l.best + " " + String(s.best)) }
        if g.isDeleted { w.text(" · " + l.deleted) }
        w.close("p")
        w.raw("<div class=\"charts\"><div>")
        w.element("h3", text: l.calendar)
        heatMap(d.heatMap, goal: g)
        w.raw("</div><div>")
        w.element("h3", text: l.periods)
        periodChart(d.periods, goal: g)
        w.raw("</div></div>\n")
        w.element("h3", text: l.history)
        if d.timeline.omitted > 0 {
            note(ReportLabels.format(l.eventsCapped, ["shown": count(d.timeline.marks.count), "total": count(d.timeline.totalEvents)]))
        }
        timeline(d.timeline)
        timelineLegend()
        w.element("h3", text: l.table)
        eventTable(d.timeline)
        w.close("section")
        w.raw("\n")
    }

    // MARK: Calendar heat map

    static let cell = 10
    static let pitch = 13

    mutating func heatMap(_ map: HeatMap, goal: GoalState) {
        let left = 30
        let top = 16
        let width = left + map.weeks * Self.pitch
        let height = top + 7 * Self.pitch
        w.raw(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"heatmap\" role=\"img\" width=\"\(width)\" height=\"\(height)\" viewBox=\"0 0 \(width) \(height)\">"
        )
        w.element("title", text: l.calendar + ": " + user(goal.title?.value ?? ""))
        for m in map.months {
            w.element("text", ["x": String(left + m.column * Self.pitch), "y": "11"], text: l.month(m.month))
        }
        for row in [1, 3, 5] {
            w.element(
                "text", ["x": "0", "y": String(top + row * Self.pitch + 9)], text: l.weekday(map.rowWeekdays[row]))
        }
        let unit = (goal.unit?.value ?? nil).map { " " + user($0) } ?? ""
        for c in map.cells {
            let x = left + c.column * Self.pitch
            let y = top + c.row * Self.pitch
            var tip = c.day.description + ": "
            if c.point.entries == 0 {
                tip += l.noProgress
            } else if let v = c.point.value {
                tip += number(v) + unit
            } else {
                tip += c.point.completed ? l.done : l.notDone
            }
            if c.point.completed { tip += " ✓ " + l.completedDay }
            w.raw(
                "<rect class=\"day l\(c.level)\" data-day=\"\(c.day)\" x=\"\(x)\" y=\"\(y)\" width=\"\(Self.cell)\" height=\"\(Self.cell)\" rx=\"2\">"
            )
            w.element("title", text: tip)
            w.raw("</rect>")
            // Measurable days that reached the target carry a dot (outcome days are done or not).
            if c.point.completed && goal.kind == .measurable {
                w.raw("<circle class=\"done-dot\" cx=\"\(Double(x) + 5)\" cy=\"\(Double(y) + 5)\" r=\"2\"/>")
            }
        }
        w.raw("</svg>")
        // The scale, and what the dot means.
        w.raw("<p class=\"legend\"><span>\(HTMLWriter.escape(l.less))</span>")
        w.raw("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"70\" height=\"11\" viewBox=\"0 0 70 11\">")
        for level in 0...4 { w.raw("<rect class=\"l\(level)\" x=\"\(level * 14)\" y=\"0\" width=\"11\" height=\"11\" rx=\"2\"/>") }
        if goal.kind == .measurable {
            w.raw("<circle class=\"done-dot\" cx=\"61.5\" cy=\"5.5\" r=\"2\"/></svg><span>\(HTMLWriter.escape(l.more))</span>")
            w.raw("<span>● = \(HTMLWriter.escape(l.completedDay))</span></p>")
        } else {
            w.raw("</svg><span>\(HTMLWriter.escape(l.more))</span></p>")
        }
    }

    // MARK: Period chart

    mutating func periodChart(_ points: [GoalHistory.Point], goal: GoalState) {
        let width = 360
        let height = 150
        let left = 40
        let right = 8
        let top = 22
        let bottom = 22
        let plotW = Double(width - left - right)
        let plotH = Double(height - top - bottom)
        let measurable = goal.kind == .measurable
        // Drawn in Doubles (a pixel is no place for exactness); every number shown is exact.
        let exactTarget = (goal.target?.value ?? nil) ?? .zero
        let target = measurable ? exactTarget.doubleValue : 1
        // Outcome periods are drawn as done (full) or not (empty), against a line at "done".
        let values = points.map { measurable ? ($0.value?.doubleValue ?? 0) : ($0.completed ? 1 : 0) }
        let topValue = max(target, values.max() ?? 0) * 1.15
        let low = min(0, values.min() ?? 0)
        let span = max(topValue - low, 1e-9)
        func y(_ v: Double) -> Double { Double(top) + plotH * (1 - (v - low) / span) }
        w.raw(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"periods\" role=\"img\" width=\"\(width)\" height=\"\(height)\" viewBox=\"0 0 \(width) \(height)\">"
        )
        w.element("title", text: l.periods + ": " + user(goal.title?.value ?? ""))
        w.raw("<line class=\"axis\" x1=\"\(left)\" y1=\"\(f(y(0)))\" x2=\"\(width - right)\" y2=\"\(f(y(0)))\"/>")
        w.element("text", ["x": "0", "y": f(y(0) + 4)], text: "0")
        let slot = plotW / Double(max(points.count, 1))
        let barW = max(2, slot * 0.7)
        let unit = (goal.unit?.value ?? nil).map { " " + user($0) } ?? ""
        for (i, p) in points.enumerated() {
            let v = values[i]
            let x = Double(left) + slot * Double(i) + (slot - barW) / 2
            let y0 = y(max(v, 0))
            let h = abs(y(0) - y(v))
            var tip = period(p.period) + ": "
            tip += measurable ? number(p.value ?? .zero) + unit : (p.completed ? l.done : l.notDone)
            if p.completed { tip += " ✓" }
            w.raw("<g class=\"period\" data-start=\"\(p.period.start)\">")
            w.element("title", text: tip)
            // An empty period is a gap; its tooltip stays on a transparent slot.
            w.raw("<rect fill=\"transparent\" x=\"\(f(x))\" y=\"\(top)\" width=\"\(f(barW))\" height=\"\(f(plotH))\"/>")
            if h > 0 {
                w.raw(
                    "<rect class=\"bar\(p.completed ? " done" : "")\" x=\"\(f(x))\" y=\"\(f(y0))\" width=\"\(f(barW))\" height=\"\(f(h))\"/>"
                )
            }
            if p.completed {
                // A tick above a period that reached its target: shape as well as colour.
                let cx = x + barW / 2
                let ty = y0 - 5
                w.raw(
                    "<polyline class=\"tick-done\" points=\"\(f(cx - 3.5)),\(f(ty - 1)) \(f(cx - 1)),\(f(ty + 2)) \(f(cx + 4)),\(f(ty - 4))\"/>"
                )
            }
            w.raw("</g>")
        }
        let ty = y(target)
        w.raw("<line class=\"target-line\" x1=\"\(left)\" y1=\"\(f(ty))\" x2=\"\(width - right)\" y2=\"\(f(ty))\"/>")
        // The line's label sits above the plot, beside a sample of the line.
        w.raw("<line class=\"target-line\" x1=\"\(left)\" y1=\"8\" x2=\"\(left + 22)\" y2=\"8\"/>")
        w.element(
            "text", ["class": "target-label", "x": String(left + 28), "y": "12"],
            text: measurable ? l.target + " " + number(exactTarget) + unit : l.done)
        w.element("text", ["x": "0", "y": f(ty + 4)], text: measurable ? number(exactTarget) : "✓")
        if let first = points.first, let last = points.last {
            w.element("text", ["x": String(left), "y": String(height - 6)], text: first.period.start.description)
            w.element(
                "text", ["x": String(width - right), "y": String(height - 6), "text-anchor": "end"], text: last.period.start.description)
        }
        w.raw("</svg>")
    }

    // MARK: Audit timeline

    static let laneHeight = 40

    mutating func timeline(_ t: Timeline) {
        let width = 1100
        let left = 110
        let right = 24
        let top = 26
        let height = top + max(1, t.lanes.count) * Self.laneHeight + 6
        let plotW = Double(width - left - right)
        let span = Double(t.end.milliseconds - t.start.milliseconds)
        func x(_ at: Instant) -> Double {
            span <= 0 ? Double(left) + plotW / 2 : Double(left) + plotW * Double(at.milliseconds - t.start.milliseconds) / span
        }
        func laneY(_ lane: Int) -> Double { Double(top + lane * Self.laneHeight + Self.laneHeight / 2) }
        w.raw(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"timeline\" role=\"img\" width=\"\(width)\" height=\"\(height)\" viewBox=\"0 0 \(width) \(height)\">"
        )
        w.element("title", text: l.history)
        for (i, lane) in t.lanes.enumerated() {
            w.open("g", ["class": "lane", "data-device": lane])
            w.raw(
                "<rect class=\"lane-bg\" x=\"0\" y=\"\(top + i * Self.laneHeight + 2)\" width=\"\(width)\" height=\"\(Self.laneHeight - 4)\" rx=\"6\"/>"
            )
            w.element("text", ["class": "lane-name", "x": "10", "y": f(laneY(i) + 4)], text: lane)
            w.raw("</g>")
        }
        // Time axis: the first and last events, and three instants between.
        for k in 0...4 where span > 0 || k == 2 {
            let at = Instant(milliseconds: t.start.milliseconds + Int64(span * Double(k) / 4))
            let anchor = k == 0 ? "start" : k == 4 ? "end" : "middle"
            w.raw("<line class=\"axis\" x1=\"\(f(x(at)))\" y1=\"\(top - 6)\" x2=\"\(f(x(at)))\" y2=\"\(height - 4)\"/>")
            w.element("text", ["x": f(x(at)), "y": "12", "text-anchor": anchor], text: local(at))
        }
        var position: [UUID: (Double, Double)] = [:]
        for m in t.marks { position[m.step.event.id] = (x(m.step.event.at), laneY(m.lane)) }
        for link in t.links {
            guard let a = position[link.from], let b = position[link.to] else { continue }
            w.open("line", ["class": link.deletion ? "link deletion" : "link", "x1": f(a.0), "y1": f(a.1), "x2": f(b.0), "y2": f(b.1)])
            w.element("title", text: (link.deletion ? l.keptAfterDelete : l.concurrent) + ": " + link.field)
            w.close("line")
        }
        for m in t.marks {
            let (cx, cy) = position[m.step.event.id]!
            var cls = "mark k-\(m.kind.rawValue)"
            if m.winner { cls += " winner" }
            if m.overwritten { cls += " lost" }
            if m.keptAfterDelete { cls += " kept" }
            w.open("g", ["class": cls, "data-event": m.step.event.id.uuidString, "data-kind": m.kind.rawValue])
            w.element("title", text: tooltip(m))
            if m.keptAfterDelete {
                w.raw("<rect class=\"kept-box\" x=\"\(f(cx - 10))\" y=\"\(f(cy - 10))\" width=\"20\" height=\"20\" rx=\"3\"/>")
            }
            shape(m.kind, cx, cy)
            if m.winner { w.raw("<circle class=\"winner-ring\" cx=\"\(f(cx))\" cy=\"\(f(cy))\" r=\"10\"/>") }
            for (i, entry) in m.recovered.enumerated() {
                star(cx + Double(i) * 12, cy - 15, entry: entry)
            }
            if !m.recovered.isEmpty {
                w.element(
                    "text", ["class": "recovered-count", "x": f(cx + 9 + Double(m.recovered.count - 1) * 12), "y": f(cy - 11)],
                    text: "+\(m.recovered.count)")
            }
            w.raw("</g>")
        }
        w.raw("</svg>")
    }

    /// One shape per kind of event, so kinds are told apart without colour.
    mutating func shape(_ kind: Timeline.Kind, _ x: Double, _ y: Double) {
        switch kind {
        case .progress: w.raw("<circle class=\"shape\" cx=\"\(f(x))\" cy=\"\(f(y))\" r=\"5.5\"/>")
        case .removed:
            w.raw("<circle class=\"stroke\" cx=\"\(f(x))\" cy=\"\(f(y))\" r=\"5\" style=\"stroke-width:2\"/>")
            w.raw(
                "<line class=\"stroke\" x1=\"\(f(x - 4))\" y1=\"\(f(y + 4))\" x2=\"\(f(x + 4))\" y2=\"\(f(y - 4))\" style=\"stroke-width:2\"/>"
            )
        case .edited: w.raw("<rect class=\"shape\" x=\"\(f(x - 5))\" y=\"\(f(y - 5))\" width=\"10\" height=\"10\"/>")
        case .created: polygon([(x, y - 7), (x + 7, y), (x, y + 7), (x - 7, y)])
        case .deleted:
            w.raw(
                "<path class=\"stroke\" d=\"M\(f(x - 5)) \(f(y - 5))L\(f(x + 5)) \(f(y + 5))M\(f(x + 5)) \(f(y - 5))L\(f(x - 5)) \(f(y + 5))\"/>"
            )
        case .restored: polygon([(x, y - 7), (x + 6.5, y + 5), (x - 6.5, y + 5)])
        case .reminder: polygon([(x - 6.5, y - 5), (x + 6.5, y - 5), (x, y + 7)])
        case .tag: polygon([(x - 6, y - 5), (x + 2, y - 5), (x + 7, y), (x + 2, y + 5), (x - 6, y + 5)])
        case .history: w.raw("<rect class=\"shape\" x=\"\(f(x - 8))\" y=\"\(f(y - 4.5))\" width=\"16\" height=\"9\" rx=\"1\"/>")
        case .device: w.raw("<circle class=\"shape\" cx=\"\(f(x))\" cy=\"\(f(y))\" r=\"3\"/>")
        }
    }

    mutating func polygon(_ points: [(Double, Double)]) {
        w.raw("<polygon class=\"shape\" points=\"" + points.map { f($0.0) + "," + f($0.1) }.joined(separator: " ") + "\"/>")
    }

    /// A five-pointed star: one per entry that migration recovered.
    mutating func star(_ x: Double, _ y: Double, entry: UUID?) {
        var points: [(Double, Double)] = []
        for i in 0..<10 {
            let r: Double = i % 2 == 0 ? 7 : 3
            let a = Double.pi / 5 * Double(i) - Double.pi / 2
            points.append((x + r * cos(a), y + r * sin(a)))
        }
        w.raw(
            "<polygon class=\"recovered\"" + (entry.map { " data-entry=\"\($0.uuidString)\"" } ?? "") + " points=\""
                + points.map { f($0.0) + "," + f($0.1) }.joined(separator: " ") + "\"/>")
    }

    mutating func timelineLegend() {
        w.raw("<p class=\"legend\">")
        for kind in Timeline.Kind.allCases where kind != .device {
            w.raw(
                "<span><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"18\" height=\"16\" viewBox=\"0 0 18 16\"><g class=\"mark k-\(kind.rawValue)\">"
            )
            shape(kind, 9, 8)
            w.raw("</g></svg>\(HTMLWriter.escape(l.kind(kind)))</span>")
        }
        w.raw(
            "<span><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"24\" height=\"24\" viewBox=\"0 0 24 24\"><g class=\"mark k-edited\"><rect class=\"shape\" x=\"7\" y=\"7\" width=\"10\" height=\"10\"/><circle class=\"winner-ring\" cx=\"12\" cy=\"12\" r=\"10\"/></g></svg>\(HTMLWriter.escape(l.winner))</span>"
        )
        w.raw(
            "<span><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"18\" height=\"16\" viewBox=\"0 0 18 16\"><g class=\"mark k-edited lost\"><rect class=\"shape\" x=\"4\" y=\"3\" width=\"10\" height=\"10\"/></g></svg>\(HTMLWriter.escape(l.overwritten))</span>"
        )
        w.raw(
            "<span><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"24\" height=\"24\" viewBox=\"0 0 24 24\"><rect class=\"kept-box\" x=\"2\" y=\"2\" width=\"20\" height=\"20\" rx=\"3\"/><g class=\"mark k-progress\"><circle class=\"shape\" cx=\"12\" cy=\"12\" r=\"5.5\"/></g></svg>\(HTMLWriter.escape(l.keptAfterDelete))</span>"
        )
        w.raw("<span><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"18\" height=\"18\" viewBox=\"0 0 18 18\">")
        star(9, 9.5, entry: nil)
        w.raw("</svg>\(HTMLWriter.escape(l.recovered))</span>")
        w.raw("</p>")
    }

    func tooltip(_ m: Timeline.Mark) -> String {
        var lines = ["\(l.kind(m.kind)) · \(m.step.event.origin) · \(local(m.step.event.at))"]
        lines += changeTexts(m)
        return lines.joined(separator: "\n")
    }

    /// Each change as `field: before → after`, then what the mark's flags mean.
    func changeTexts(_ m: Timeline.Mark) -> [String] {
        var lines: [String] = []
        for c in m.changes {
            lines.append("\(c.field): \(value(c.before)) → \(value(c.after))")
        }
        if m.winner {
            lines.append(
                l.winner + ": "
                    + m.step.overwrote.map { "\($0.field) \(user(JSONWriter.message($0.value))) (\($0.device))" }.joined(separator: ", "))
        }
        if m.overwritten {
            lines.append(
                l.overwritten + ": "
                    + m.step.supersededBy.map { "\($0.field) \(user(JSONWriter.message($0.value))) (\($0.device))" }.joined(separator: ", "))
        }
        if m.keptAfterDelete { lines.append(l.keptAfterDelete) }
        for id in m.recovered { lines.append("★ " + l.recovered + ": " + id.uuidString) }
        return lines
    }

    mutating func eventTable(_ t: Timeline) {
        w.raw("<table class=\"events\"><thead><tr>")
        for h in [l.when, l.device, l.event, l.change] { w.element("th", text: h) }
        w.raw("</tr></thead><tbody>\n")
        for m in t.marks {
            w.open("tr", ["data-event": m.step.event.id.uuidString])
            w.element("td", text: local(m.step.event.at))
            w.element("td", text: m.step.event.origin)
            w.open("td")
            w.text(l.kind(m.kind) + " ")
            w.element("code", ["title": m.step.event.id.uuidString], text: String(m.step.event.id.uuidString.prefix(8)))
            w.close("td")
            w.open("td")
            if m.winner { w.element("span", ["class": "flag flag-winner"], text: "◎ " + l.winner) }
            if m.overwritten { w.element("span", ["class": "flag flag-lost"], text: "□ " + l.overwritten) }
            if m.keptAfterDelete { w.element("span", ["class": "flag flag-kept"], text: "⬚ " + l.keptAfterDelete) }
            if !m.recovered.isEmpty {
                w.element("span", ["class": "flag flag-recovered"], text: "★ " + l.recovered + " ×\(m.recovered.count)")
            }
            let texts = changeTexts(m).filter { !$0.hasPrefix("★") }
            for (i, line) in texts.enumerated() {
                if i > 0 { w.raw("<br>") }
                w.element("bdi", text: line)
            }
            w.close("td")
            w.close("tr")
            w.raw("\n")
        }
        w.raw("</tbody></table>")
    }

    // MARK: Reminders

    mutating func reminders() {
        w.open("section", ["id": "reminders"])
        w.element("h2", text: l.reminders)
        for d in report.reminders {
            let settings = d.device.settings
            w.open("div", ["class": "device-reminders", "data-device": d.device.name])
            w.element(
                "h3",
                text: ReportLabels.format(
                    l.deviceLine,
                    [
                        "device": d.device.name, "strategy": settings.strategy.rawValue,
                        "authorization": d.device.authorization?.value.rawValue ?? l.unknown, "count": count(d.upcoming.count + d.omitted),
                    ]) + " · " + settings.timeZone)
            if d.upcoming.isEmpty {
                w.element("p", ["class": "muted"], text: l.noReminders)
            } else {
                w.raw("<table class=\"reminders\"><thead><tr>")
                for h in [l.when, l.goal, l.change] { w.element("th", text: h) }
                w.raw("</tr></thead><tbody>\n")
                let deviceZone = d.device.calendar.timeZone
                for u in d.upcoming {
                    w.open("tr", ["data-request": u.request.id])
                    w.element("td", ["class": "num"], text: local(u.fireAt, deviceZone) + (u.request.trigger.repeats ? " ↻" : ""))
                    w.open("td")
                    w.element("bdi", text: user(u.request.title))
                    w.close("td")
                    w.open("td")
                    w.element("bdi", text: user(u.request.body))
                    w.close("td")
                    w.close("tr")
                    w.raw("\n")
                }
                w.raw("</tbody></table>")
            }
            if d.omitted > 0 { note(ReportLabels.format(l.remindersCapped, ["omitted": count(d.omitted)])) }
            if !d.plan.overCapacity.isEmpty {
                w.element(
                    "p", ["class": "muted"], text: l.overCapacity + " " + d.plan.overCapacity.map(\.uuidString).joined(separator: ", "))
            }
            w.close("div")
            w.raw("\n")
        }
        w.close("section")
        w.raw("\n")
    }

    // MARK: Formatting

    func target(_ g: GoalState) -> String {
        guard g.kind == .measurable else { return "✓" }
        return number((g.target?.value ?? nil) ?? .zero) + ((g.unit?.value ?? nil).map { " " + user($0) } ?? "")
    }

    func period(_ p: Period?) -> String {
        guard let p else { return l.allTime }
        return p.start == p.end ? p.start.description : "\(p.start) – \(p.end)"
    }

    func number(_ v: Amount) -> String { v.description }

    /// Text a person wrote (a title, tag, unit, value, reminder), isolated from the page's own
    /// text around it (`HTMLWriter.isolated`): it cannot reorder a tooltip, a chart label or a
    /// table cell.
    func user(_ s: String) -> String { HTMLWriter.isolated(s) }

    /// A value an audit step shows: text as is, an entry as its amount or outcome and day.
    func value(_ v: JSONValue) -> String {
        switch v {
        case .null: return "—"
        case .string(let s): return user(s)
        case .object:
            if let day = v["day"], case .string(let d) = day {
                let what: String
                if let a = v["amount"], let n = a.amountText {
                    what = n
                } else if let c = v["completed"], case .bool(let b) = c {
                    what = b ? "✓ " + l.done : "✗ " + l.notDone
                } else {
                    what = "?"
                }
                return "\(what) (\(d))"
            }
            return user(JSONWriter.message(v))
        default: return user(JSONWriter.message(v))
        }
    }

    /// `1,000,000`: digits grouped by threes, the same in every locale.
    func count(_ n: Int) -> String {
        let digits = Array(String(n.magnitude))
        var out = n < 0 ? "-" : ""
        for (i, d) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out += "," }
            out.append(d)
        }
        return out
    }

    /// Two decimals at most, for coordinates.
    func f(_ v: Double) -> String {
        let r = (v * 100).rounded() / 100
        return r == r.rounded() ? String(Int(r)) : String(r)
    }

    /// `YYYY-MM-DD HH:MM` in the report device's zone (or `zone`).
    func local(_ at: Instant, _ zone: TimeZone? = nil) -> String { ReportTime.local(at, zone ?? self.zone) }
}

/// Local wall-clock times for the page, from the zone's offsets only (never the machine's zone).
enum ReportTime {
    static func local(_ at: Instant, _ zone: TimeZone) -> String {
        let seconds = at.milliseconds.floorDivided(by: 1000).quotient
        let offset = Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(seconds))))
        let wall = seconds + offset
        let day = Day(daysSinceEpoch: Int32(wall.floorDivided(by: 86_400).quotient))
        let minutes = Int(wall.floorDivided(by: 86_400).remainder / 60)
        return "\(day) \(pad2(minutes / 60)):\(pad2(minutes % 60))"
    }
}
