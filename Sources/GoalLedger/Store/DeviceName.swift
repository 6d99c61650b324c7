import Foundation

/// Device names: `[a-z0-9][a-z0-9._-]{0,63}`.
package enum DeviceName {
    public static func isValid(_ name: String) -> Bool {
        let b = Array(name.utf8)
        guard (1...64).contains(b.count) else { return false }
        func ok(_ c: UInt8, first: Bool) -> Bool {
            (97...122).contains(c) || (48...57).contains(c) || (!first && (c == 46 || c == 95 || c == 45))
        }
        return ok(b[0], first: true) && b.dropFirst().allSatisfy { ok($0, first: false) }
    }
}
