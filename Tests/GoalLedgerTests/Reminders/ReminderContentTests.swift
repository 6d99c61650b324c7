import Foundation
import Testing

@testable import GoalLedger

struct ReminderContentTests {
    @Test func englishBodies() {
        #expect(ReminderContent.body(cadence: .once, targetDate: day("2027-05-31"), locale: "en_US") == "Due on 2027-05-31")
        #expect(ReminderContent.body(cadence: .daily, targetDate: nil, locale: "en_US") == "Time for today's goal")
        #expect(ReminderContent.body(cadence: .weekly, targetDate: nil, locale: "en_GB") == "Keep up this week's goal")
        #expect(ReminderContent.body(cadence: .monthly, targetDate: nil, locale: "en") == "Keep up this month's goal")
        #expect(ReminderContent.body(cadence: .yearly, targetDate: nil, locale: "en_US") == "Keep up this year's goal")
    }

    @Test func japaneseBodies() {
        #expect(ReminderContent.body(cadence: .once, targetDate: day("2027-05-01"), locale: "ja_JP") == "期日は2027年5月1日です")
        #expect(ReminderContent.body(cadence: .daily, targetDate: nil, locale: "ja_JP") == "今日の目標の時間です")
        #expect(ReminderContent.body(cadence: .weekly, targetDate: nil, locale: "ja") == "今週の目標を続けましょう")
        #expect(ReminderContent.body(cadence: .monthly, targetDate: nil, locale: "ja-JP") == "今月の目標を続けましょう")
        #expect(ReminderContent.body(cadence: .yearly, targetDate: nil, locale: "JA_jp") == "今年の目標を続けましょう")
    }

    @Test func otherLanguagesFallBackToEnglish() {
        #expect(ReminderContent.body(cadence: .daily, targetDate: nil, locale: "de_DE") == "Time for today's goal")
        #expect(ReminderContent.body(cadence: .once, targetDate: day("2027-05-31"), locale: "fr_FR") == "Due on 2027-05-31")
        #expect(ReminderContent.body(cadence: .daily, targetDate: nil, locale: "jam") == "Time for today's goal")
        #expect(ReminderContent.body(cadence: .daily, targetDate: nil, locale: "") == "Time for today's goal")
    }

    @Test func everyLanguageHasABodyForEveryCadence() {
        for (language, book) in ReminderContent.phrasebooks {
            for cadence in Cadence.allCases {
                #expect(book.bodies[cadence] != nil, "\(language) \(cadence)")
            }
            #expect(book.bodies[.once]!.contains("{date}"), "\(language)")
        }
    }

    @Test func requestsCarryTheDevicesLanguage() throws {
        let goal = ReminderGoal(title: "Run 5 km", cadence: .once, targetDate: "2026-06-20")
        let now = instant("2026-06-10T12:00:00Z")
        for (locale, body) in [("en_US", "Due on 2026-06-20"), ("ja_JP", "期日は2026年6月20日です"), ("de_DE", "Due on 2026-06-20")] {
            let r = try #require(ReminderPlan.requests(for: goal.state, device: device("Asia/Tokyo", locale: locale), now: now).first)
            #expect(r.title == "Run 5 km")
            #expect(r.body == body)
            #expect(r.sound == "default")
            #expect(r.goal == goal.id)
        }
        let daily = ReminderGoal(title: "ストレッチ", cadence: .daily)
        let r = try #require(ReminderPlan.requests(for: daily.state, device: device("Asia/Tokyo", locale: "ja_JP"), now: now).first)
        #expect(r.title == "ストレッチ")
        #expect(r.body == "今日の目標の時間です")
    }
}
