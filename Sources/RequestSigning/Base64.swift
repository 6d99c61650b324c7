/// Standard base64 (with `+`, `/` and `=` padding), strict when decoding: the length must be a
/// multiple of four, padding only at the end, and the bits padding leaves over must be zero, so
/// that every byte string has exactly one accepted encoding.
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, character) in alphabet.enumerated() { table[Int(character)] = UInt8(value) }
        return table
    }()

    /// Whether `byte` may appear in an encoding (the 64 characters and `=`).
    static func isAlphabet(_ byte: UInt8) -> Bool { byte == UInt8(ascii: "=") || values[Int(byte)] != 0xFF }

    /// The padded encoding of `bytes`.
    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let b0 = bytes[index]
            let b1 = index + 1 < bytes.count ? bytes[index + 1] : 0
            let b2 = index + 2 < bytes.count ? bytes[index + 2] : 0
            out.append(alphabet[Int(b0 >> 2)])
            out.append(alphabet[Int((b0 & 0x03) << 4 | b1 >> 4)])
            out.append(index + 1 < bytes.count ? alphabet[Int((b1 & 0x0F) << 2 | b2 >> 6)] : UInt8(ascii: "="))
            out.append(index + 2 < bytes.count ? alphabet[Int(b2 & 0x3F)] : UInt8(ascii: "="))
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes `text` encodes, or nil when it is not canonical, padded base64.
    static func decode(_ text: [UInt8]) -> [UInt8]? {
        guard text.count % 4 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(text.count / 4 * 3)
        var index = 0
        while index < text.count {
            let isLast = index + 4 == text.count
            let c2Pad = text[index + 2] == UInt8(ascii: "=")
            let c3Pad = text[index + 3] == UInt8(ascii: "=")
            // Padding only in the last group, and "=x" is never valid.
            if (c2Pad || c3Pad) && !isLast { return nil }
            if c2Pad && !c3Pad { return nil }
            let v0 = values[Int(text[index])]
            let v1 = values[Int(text[index + 1])]
            let v2 = c2Pad ? 0 : values[Int(text[index + 2])]
            let v3 = c3Pad ? 0 : values[Int(text[index + 3])]
            if v0 == 0xFF || v1 == 0xFF || v2 == 0xFF || v3 == 0xFF { return nil }
            out.append(v0 << 2 | v1 >> 4)
            if c2Pad {
                guard v1 & 0x0F == 0 else { return nil }
            } else {
                out.append((v1 & 0x0F) << 4 | v2 >> 2)
                if c3Pad {
                    guard v2 & 0x03 == 0 else { return nil }
                } else {
                    out.append((v2 & 0x03) << 6 | v3)
                }
            }
            index += 4
        }
        return out
    }

    /// The bytes `text` encodes, or nil when it is not canonical, padded base64.
    static func decode(_ text: String) -> [UInt8]? { decode(Array(text.utf8)) }
}
