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
    package static func language(of locale: String) -> String {
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

/// A reminder's wording: what the notification shows.
public struct ReminderText: Hashable, Sendable {
    /// The notification's title.
    public var title: String
    /// The notification's body.
    public var body: String

    /// A wording of `title` and `body`.
    public init(title: String, body: String) {
        self.title = title
        self.body = body
    }
}

/// An app's wording of a goal reminder, from the request the ledger wants (its goal, the goal's
/// title, the ledger's own body in the device's language, the trigger). It must be a pure
/// function of the request, so that a pass that changes nothing finds the center's requests
/// equal and leaves them alone.
public typealias ReminderContentProvider = @Sendable (NotificationRequest) -> ReminderText
