import Foundation

/// The localized wording of goal reminders: one phrasebook per language, chosen by the device
/// locale's language, English when the language has none.
public enum ReminderContent {
    /// Bodies per cadence, and how a target date is written. `{date}` in a body is replaced by
    /// the target date; `{yyyy}`, `{mm}`/`{m}` and `{dd}`/`{d}` in the date pattern by its year,
    /// month and day (two digits / no padding).
    struct Phrasebook: Sendable {
        var bodies: [Cadence: String]
        var datePattern: String
    }

    static let fallbackLanguage = "en"

    static let phrasebooks: [String: Phrasebook] = [
        "en": Phrasebook(
            bodies: [
                .once: "Due on {date}",
                .daily: "Time for today's goal",
                .weekly: "Keep up this week's goal",
                .monthly: "Keep up this month's goal",
                .yearly: "Keep up this year's goal",
            ],
            datePattern: "{yyyy}-{mm}-{dd}"),
        "ja": Phrasebook(
            bodies: [
                .once: "期日は{date}です",
                .daily: "今日の目標の時間です",
                .weekly: "今週の目標を続けましょう",
                .monthly: "今月の目標を続けましょう",
                .yearly: "今年の目標を続けましょう",
            ],
            datePattern: "{yyyy}年{m}月{d}日"),
    ]

    /// The language of a locale identifier (`ja_JP`, `ja-JP`, `ja` → `ja`), lower-cased.
    static func language(of locale: String) -> String {
        String(locale.prefix { $0 != "_" && $0 != "-" && $0 != "@" }).lowercased()
    }

    static func phrasebook(for locale: String) -> Phrasebook {
        phrasebooks[language(of: locale)] ?? phrasebooks[fallbackLanguage]!
    }

    /// The notification body for a goal of `cadence` (one-time goals mention `targetDate`).
    public static func body(cadence: Cadence, targetDate: Day?, locale: String) -> String {
        let book = phrasebook(for: locale)
        let template = book.bodies[cadence] ?? phrasebooks[fallbackLanguage]!.bodies[cadence]!
        guard let targetDate else { return template }
        let (y, m, d) = targetDate.components
        let year = String(y)
        let date = book.datePattern
            .replacingOccurrences(of: "{yyyy}", with: String(repeating: "0", count: max(0, 4 - year.count)) + year)
            .replacingOccurrences(of: "{mm}", with: pad2(m))
            .replacingOccurrences(of: "{dd}", with: pad2(d))
            .replacingOccurrences(of: "{m}", with: String(m))
            .replacingOccurrences(of: "{d}", with: String(d))
        return template.replacingOccurrences(of: "{date}", with: date)
    }
}
