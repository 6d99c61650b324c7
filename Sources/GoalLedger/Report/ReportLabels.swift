import Foundation

/// The wording of a report, one phrasebook per language chosen by the device locale's language
/// (as `ReminderContent` chooses reminder bodies), English when the language has none.
/// `{name}` placeholders are filled by `format`.
public struct ReportLabels: Sendable {
    public var language: String
    public var title: String
    /// `{device}`, `{zone}`, `{weekday}`, `{now}`.
    public var subtitle: String
    public var overview: String
    public var goal: String
    public var goalsCount: String
    public var eventsCount: String
    public var cadence: String
    public var period: String
    public var value: String
    public var target: String
    public var streak: String
    public var best: String
    public var done: String
    public var notDone: String
    public var deleted: String
    public var allTime: String
    public var calendar: String
    public var periods: String
    public var history: String
    public var table: String
    public var when: String
    public var device: String
    public var event: String
    public var change: String
    public var reminders: String
    public var noReminders: String
    public var noGoals: String
    /// `{device}`, `{strategy}`, `{authorization}`, `{count}`.
    public var deviceLine: String
    public var unknown: String
    public var overCapacity: String
    public var less: String
    public var more: String
    public var completedDay: String
    public var noProgress: String
    public var entries: String
    public var winner: String
    public var overwritten: String
    public var keptAfterDelete: String
    public var recovered: String
    public var concurrent: String
    public var legend: String
    /// `{shown}`, `{total}`.
    public var goalsCapped: String
    public var overviewCapped: String
    public var eventsCapped: String
    public var remindersCapped: String
    public var footer: String
    public var cadences: [Cadence: String]
    public var kinds: [Timeline.Kind: String]
    /// Indexed by month − 1.
    public var months: [String]
    /// Indexed by weekday − 1 (1 = Sunday).
    public var weekdays: [String]

    public func cadence(_ c: Cadence) -> String { cadences[c] ?? c.rawValue }
    public func kind(_ k: Timeline.Kind) -> String { kinds[k] ?? k.rawValue }
    public func month(_ m: Int) -> String { months[(m - 1) % 12] }
    public func weekday(_ w: Int) -> String { weekdays[(w - 1) % 7] }

    /// `template` with each `{key}` replaced.
    public static func format(_ template: String, _ values: [String: String]) -> String {
        var s = template
        for (k, v) in values { s = s.replacingOccurrences(of: "{\(k)}", with: v) }
        return s
    }

    public static func `for`(locale: String) -> ReportLabels {
        phrasebooks[ReminderContent.language(of: locale)] ?? english
    }

    static let phrasebooks = ["en": english, "ja": japanese]

    static let english = ReportLabels(
        language: "en", title: "Goal ledger report",
        subtitle: "As seen by {device} ({zone}, weeks start on {weekday}) at {now}",
        overview: "Overview", goal: "Goal", goalsCount: "goals", eventsCount: "events", cadence: "Cadence", period: "Current period",
        value: "Value", target: "Target",
        streak: "Streak", best: "Best", done: "done", notDone: "not yet", deleted: "deleted", allTime: "all time",
        calendar: "Last 53 weeks", periods: "Recent periods against the target", history: "History by device",
        table: "Every change, for reading", when: "When", device: "Device", event: "Event", change: "Change",
        reminders: "Reminders in the next seven days", noReminders: "No reminders in the next seven days.", noGoals: "No goals yet.",
        deviceLine: "{device}: {strategy} strategy, notifications {authorization}, {count} planned",
        unknown: "not reported", overCapacity: "Over the device's capacity (not scheduled):", less: "Less", more: "More",
        completedDay: "target reached", noProgress: "no progress", entries: "entries",
        winner: "won a concurrent edit", overwritten: "overwritten by a concurrent edit",
        keptAfterDelete: "made without seeing a deletion: kept in the history", recovered: "recovered by migration",
        concurrent: "concurrent", legend: "Legend",
        goalsCapped: "{shown} of {total} goals are drawn in full; the others are in the overview (choose them with --goal).",
        overviewCapped: "The overview lists {shown} of {total} goals.",
        eventsCapped: "Showing {shown} of {total} events: conflicts and recovered entries, then the latest.",
        remindersCapped: "{omitted} more fire times are not listed.",
        footer: "Written by `ledger report` from the stored projection and the log; every figure comes from the ledger's own views.",
        cadences: [.once: "one-time", .daily: "daily", .weekly: "weekly", .monthly: "monthly", .yearly: "yearly"],
        kinds: [
            .created: "created", .edited: "edited", .deleted: "deleted", .restored: "restored", .progress: "progress",
            .removed: "entry removed", .tag: "tag", .reminder: "reminder", .history: "history written (schema 1)", .device: "device",
        ],
        months: ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"],
        weekdays: ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"])

    static let japanese = ReportLabels(
        language: "ja", title: "目標台帳レポート",
        subtitle: "{device}から見た記録({zone}、週の始まり: {weekday}曜日)、{now}時点",
        overview: "概要", goal: "目標", goalsCount: "件の目標", eventsCount: "件のイベント", cadence: "周期", period: "今の期間", value: "値", target: "目標値",
        streak: "連続", best: "最高", done: "達成", notDone: "未達成", deleted: "削除済み", allTime: "全期間",
        calendar: "過去53週間", periods: "最近の期間と目標値", history: "デバイス別の履歴",
        table: "すべての変更(一覧)", when: "日時", device: "デバイス", event: "イベント", change: "変更",
        reminders: "今後7日間のリマインダー", noReminders: "今後7日間のリマインダーはありません。", noGoals: "目標はまだありません。",
        deviceLine: "{device}: {strategy}方式、通知の許可 {authorization}、予定 {count}件",
        unknown: "未報告", overCapacity: "デバイスの上限を超えた目標(未登録):", less: "少", more: "多",
        completedDay: "目標値に到達", noProgress: "記録なし", entries: "件",
        winner: "同時編集で採用", overwritten: "同時編集で上書きされた", keptAfterDelete: "削除を知らずに行われた変更(履歴に保持)",
        recovered: "移行で復元", concurrent: "同時", legend: "凡例",
        goalsCapped: "{total}件中{shown}件の目標を詳しく表示しています。他は概要にあります(--goal で選べます)。",
        overviewCapped: "概要には{total}件中{shown}件の目標を載せています。",
        eventsCapped: "{total}件中{shown}件のイベントを表示しています(競合と復元を優先し、残りは新しい順)。",
        remindersCapped: "ほかに{omitted}件の通知予定があります。",
        footer: "`ledger report` が保存済みの投影とログから作成しました。数値はすべて台帳のビューによるものです。",
        cadences: [.once: "一度きり", .daily: "毎日", .weekly: "毎週", .monthly: "毎月", .yearly: "毎年"],
        kinds: [
            .created: "作成", .edited: "編集", .deleted: "削除", .restored: "復元", .progress: "進捗", .removed: "記録の取り消し",
            .tag: "タグ", .reminder: "リマインダー", .history: "履歴の書き込み(スキーマ1)", .device: "デバイス",
        ],
        months: (1...12).map { "\($0)月" },
        weekdays: ["日", "月", "火", "水", "木", "金", "土"])
}
