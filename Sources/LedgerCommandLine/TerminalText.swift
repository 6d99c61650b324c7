/// Text from a store (titles, details, units, tags, values, device names) made safe to print
/// to a terminal: a character that a terminal would act on rather than show is written as a
/// visible escape, `\u{1B}`, so that an event cannot clear the screen, move the cursor, set the
/// clipboard (OSC 52), change the window title, fake a line of output, or reorder the line.
enum TerminalText {
    /// `text` with every control character (C0, DEL, C1: general category Cc), line and
    /// paragraph separator, and bidirectional formatting character written as `\u{HEX}`; with
    /// `keepingLineBreaks`, line feeds stay (for messages of several lines).
    static func escaped(_ text: String, keepingLineBreaks: Bool = false) -> String {
        guard text.unicodeScalars.contains(where: { needsEscape($0) && !(keepingLineBreaks && $0 == "\n") }) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            if needsEscape(scalar) && !(keepingLineBreaks && scalar == "\n") {
                out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Whether a terminal may act on `scalar` instead of showing it.
    static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: true  // C0, DEL, C1 (CSI U+009B, OSC U+009D, …)
        case 0x2028, 0x2029: true  // line and paragraph separators
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true  // bidirectional marks, embeddings, overrides, isolates
        default: false
        }
    }
}

extension Invocation {
    /// Prints a line of text that holds text from the store, escaped (`TerminalText`).
    mutating func printText(_ line: String) { print(TerminalText.escaped(line)) }
}
