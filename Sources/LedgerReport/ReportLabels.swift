import Foundation
import GoalLedger

/// The wording of a report, one phrasebook per language chosen by the device locale's language
/// (as `ReminderContent` chooses reminder bodies), English when the language has none.
/// `{name}` placeholders are filled by `format`.
package struct ReportLabels: Sendable {
    /// The language code of this phrasebook (`en`, `ja`): the page's `lang`.
    package var language: String
    /// The page's title and first heading.
    package var title: String
    /// The line under the title: `{device}`, `{zone}`, `{weekday}`, `{now}`.
    package var subtitle: String
    /// The overview's heading.
    package var overview: String
    /// The goal column's heading (overview and reminder tables).
    package var goal: String
    /// The word after the number of goals under the title.
    package var goalsCount: String
    /// The word after the number of events under the title.
    package var eventsCount: String
    /// The cadence column's heading.
    package var cadence: String
    /// The current period's heading, and its prefix in a goal's summary line.
    package var period: String
    /// The value column's heading.
    package var value: String
    /// The target column's heading, and the prefix of a target.
    package var target: String
    /// The current streak's heading and prefix.
    package var streak: String
    /// The best streak's heading and prefix.
    package var best: String
    /// An outcome completed (a period or day).
    package var done: String
    /// An outcome not completed yet.
    package var notDone: String
    /// The mark of a deleted goal.
    package var deleted: String
    /// The period of a one-time goal (no period bounds).
    package var allTime: String
    /// The heat map's heading.
    package var calendar: String
    /// The period chart's heading.
    package var periods: String
    /// The timeline's heading.
    package var history: String
    /// The heading of the table of every change.
    package var table: String
    /// The time column's heading.
    package var when: String
    /// The device column's heading.
    package var device: String
    /// The event column's heading.
    package var event: String
    /// The change column's heading.
    package var change: String
    /// The reminders section's heading.
    package var reminders: String
    /// What a device without upcoming reminders shows.
    package var noReminders: String
    /// What the overview of a ledger without goals shows.
    package var noGoals: String
    /// A device's line in the reminders section: `{device}`, `{strategy}`, `{authorization}`,
    /// `{count}`.
    package var deviceLine: String
    /// The authorization of a device that never reported one.
    package var unknown: String
    /// The prefix of the goals left out by a device's capacity.
    package var overCapacity: String
    /// The heat map legend's low end.
    package var less: String
    /// The heat map legend's high end.
    package var more: String
    /// A day that reached the target (heat map).
    package var completedDay: String
    /// A day without progress entries (heat map).
    package var noProgress: String
    /// The flag of an event that won a concurrent edit.
    package var winner: String
    /// The flag of an event overwritten by a concurrent edit.
    package var overwritten: String
    /// The flag of a change made without seeing a deletion.
    package var keptAfterDelete: String
    /// The flag of entries that migration recovered.
    package var recovered: String
    /// The tooltip of a link between concurrent writes.
    package var concurrent: String
    /// The note when not every goal is drawn in full: `{shown}`, `{total}`, and `{choose}` where
    /// the caller's hint on choosing the goals goes (the command line names its option).
    package var goalsCapped: String
    /// The note under a shortened overview: `{shown}`, `{total}`.
    package var overviewCapped: String
    /// The note under a shortened timeline: `{shown}`, `{total}`.
    package var eventsCapped: String
    /// The note under a shortened list of fire times: `{omitted}`.
    package var remindersCapped: String
    /// The page's footer.
    package var footer: String
    /// The name of each cadence.
    package var cadences: [Cadence: String]
    /// The name of each kind of timeline mark.
    package var kinds: [Timeline.Kind: String]
    /// Indexed by month − 1.
    package var months: [String]
    /// Indexed by weekday − 1 (1 = Sunday).
    package var weekdays: [String]

    /// The name of cadence `c` (its raw value if the phrasebook has none).
    package func cadence(_ c: Cadence) -> String { cadences[c] ?? c.rawValue }
    /// The name of mark kind `k` (its raw value if the phrasebook has none).
    package func kind(_ k: Timeline.Kind) -> String { kinds[k] ?? k.rawValue }
    /// The short name of month `m` (1 = January).
    package func month(_ m: Int) -> String { months[(m - 1) % 12] }
    /// The short name of weekday `w` (1 = Sunday).
    package func weekday(_ w: Int) -> String { weekdays[(w - 1) % 7] }

    /// `template` with each `{key}` replaced.
    package static func format(_ template: String, _ values: [String: String]) -> String {
        var s = template
        for (k, v) in values { s = s.replacingOccurrences(of: "{\(k)}", with: v) }
        return s
    }

    /// The labels for a locale identifier (`ja_JP`): its language's, English when it has none.
    package static func `for`(locale: String) -> ReportLabels {
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
        completedDay: "target reached", noProgress: "no progress",
        winner: "won a concurrent edit", overwritten: "overwritten by a concurrent edit",
        keptAfterDelete: "made without seeing a deletion: kept in the history", recovered: "recovered by migration",
        concurrent: "concurrent",
        goalsCapped: "{shown} of {total} goals are drawn in full; the others are in the overview{choose}.",
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
        completedDay: "目標値に到達", noProgress: "記録なし",
        winner: "同時編集で採用", overwritten: "同時編集で上書きされた", keptAfterDelete: "削除を知らずに行われた変更(履歴に保持)",
        recovered: "移行で復元", concurrent: "同時",
        goalsCapped: "{total}件中{shown}件の目標を詳しく表示しています。他は概要にあります{choose}。",
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
