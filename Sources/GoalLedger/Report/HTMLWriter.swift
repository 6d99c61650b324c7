import Foundation

/// Builds an HTML document in one string. Every piece of text that is not markup goes through
/// `text` or an attribute value, which escape it, so titles, tags and units (arbitrary Unicode,
/// `<`, `&`, quotes, right-to-left text) can never become markup. The escaping is valid in both
/// HTML and XML, so inline SVG stays well-formed.
struct HTMLWriter {
    private(set) var output = ""

    init(capacity: Int = 1 << 16) { output.reserveCapacity(capacity) }

    /// Markup written as is: only ever string literals of this module.
    mutating func raw(_ markup: String) { output += markup }

    mutating func text(_ s: String) { output += Self.escape(s) }

    /// `<name attr="value"…>`; attributes with a nil value are left out.
    mutating func open(_ name: String, _ attributes: KeyValuePairs<String, String?> = [:]) {
        output += "<" + name
        for (k, v) in attributes {
            guard let v else { continue }
            output += " " + k + "=\"" + Self.escape(v) + "\""
        }
        output += ">"
    }

    /// A self-closed SVG element (`<rect …/>`).
    mutating func empty(_ name: String, _ attributes: KeyValuePairs<String, String?> = [:]) {
        output += "<" + name
        for (k, v) in attributes {
            guard let v else { continue }
            output += " " + k + "=\"" + Self.escape(v) + "\""
        }
        output += "/>"
    }

    mutating func close(_ name: String) { output += "</" + name + ">" }

    /// `<name …>text</name>`.
    mutating func element(_ name: String, _ attributes: KeyValuePairs<String, String?> = [:], text: String) {
        open(name, attributes)
        self.text(text)
        close(name)
    }

    /// `s` with `& < > " '` escaped, and the code points that neither HTML nor XML allows in
    /// text (C0 and C1 controls other than tab, line feed and carriage return, and
    /// noncharacters) replaced by U+FFFD.
    static func escape(_ s: String) -> String {
        if !s.utf8.contains(where: {
            $0 < 0x20 || $0 == UInt8(ascii: "&") || $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: ">") || $0 == UInt8(ascii: "\"")
                || $0 == UInt8(ascii: "'") || $0 >= 0xC2
        }) {
            return s
        }
        var out = ""
        out.reserveCapacity(s.utf8.count + 16)
        for scalar in s.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case "\t", "\n": out.unicodeScalars.append(scalar)
            case "\r": out += " "
            default:
                let v = scalar.value
                let control = v < 0x20 || (0x7F...0x9F).contains(v)
                let noncharacter = (0xFDD0...0xFDEF).contains(v) || v & 0xFFFE == 0xFFFE
                out.unicodeScalars.append(control || noncharacter ? "\u{FFFD}" : scalar)
            }
        }
        return out
    }
}
