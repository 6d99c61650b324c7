import GoalLedger

// Tests write amounts as literals (`amount: 2.5`); the library's `Amount` takes none, so that an
// app's `try Amount(0.1234567)` is always the throwing initializer. A literal here that breaks
// the rule traps, which in a test is a mistake in the test. To test a refusal, pass a `Double`
// (`try Amount(0.1234567 as Double)`) or a string.
extension Amount: ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral {
    public init(integerLiteral value: Int64) {
        do { self = try Amount(whole: value) } catch { preconditionFailure("\(error)") }
    }

    public init(floatLiteral value: Double) {
        do { self = try Amount(value as Double) } catch { preconditionFailure("\(error)") }
    }
}
