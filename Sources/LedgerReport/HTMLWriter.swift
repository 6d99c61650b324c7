import Foundation
import GoalLedger

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

    /// `s` as a unit of its own direction inside other text: its explicit directional
    /// embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069), which could reorder
    /// the text around it or close an isolate early, removed, and the rest wrapped in a first-strong
    /// isolate (U+2068 … U+2069). Right-to-left text keeps its direction; it only stays in place.
    /// For plain-text places (SVG `<title>` tooltips, SVG `<text>`, table cells), where
    /// no element can isolate it.
    static func isolated(_ s: String) -> String {
        var out = "\u{2068}"
        out.unicodeScalars.append(contentsOf: s.unicodeScalars.filter { !isDirectionalFormatting($0) })
        out.unicodeScalars.append("\u{2069}")
        return out
    }

    /// The explicit directional formatting characters: LRE, RLE, PDF, LRO, RLO, LRI, RLI, FSI, PDI.
    static func isDirectionalFormatting(_ scalar: Unicode.Scalar) -> Bool {
        (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
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
