import Foundation
import ParleyMarkdown
import ParleyTestSupport

// parley-markdown-bench: what streaming Markdown costs on the server (run by `make bench`).
// Streams a ~50 KB realistic answer through StableMarkdown in 4-byte pieces and compares the total
// with one full render of the same text; also reports how large the raw tail gets. Then streams
// replies made of one long block (issue 11: code fence, list, table, and prose for comparison) in
// 12-byte pieces, one update per piece as with frame interval 0, and reports CPU against one full
// render and the bytes an html-mode client is sent against the final HTML.

/// A realistic long answer: headings, prose, nested lists, fences, tables, quotes, CJK and emoji.
func answer(bytes target: Int) -> String {
    var text = "# Migration plan\n\nThis answer walks through the whole migration, step by step.\n\n"
    var section = 0
    while text.utf8.count < target {
        section += 1
        text += """
        ## Step \(section): moving the \(["storage", "queue", "cache", "index"][section % 4]) layer

        The current setup keeps **state** in one place, which makes `step \(section)` easy to reason about \
        but hard to scale. We split it into smaller parts — each with its own *owner* — and keep the \
        old path running until the new one is proven. 日本語のメモ 👍🏽

        1. Prepare the new schema
           - add the columns
           - backfill in batches of 1,000 rows
        2. Switch reads behind a flag
        3. Remove the old code

        ```swift
        struct Step\(section): Migration {
            let batchSize = 1_000
            func run(on db: Database) throws {
                for batch in try db.batches(of: batchSize) {
                    try batch.copy(to: "new_table_\(section)")
                }
            }
        }
        ```

        | phase | risk | rollback |
        |:--|:-:|--:|
        | prepare | low | drop columns |
        | switch | medium | flip the flag |
        | clean up | low | none needed |

        > Note: run the backfill at night; it holds locks for
        > a few seconds per batch.

        - [x] reviewed
        - [ ] scheduled


        """
    }
    return text
}

func pieces(of text: String, size: Int) -> [String] {
    let bytes = Array(text.utf8)
    var result: [String] = []
    var start = 0
    while start < bytes.count {
        var end = min(bytes.count, start + size)
        while end < bytes.count, bytes[end] & 0xC0 == 0x80 { end += 1 }
        result.append(String(decoding: bytes[start..<end], as: UTF8.self))
        start = end
    }
    return result
}

func seconds(_ work: () -> Void) -> Double {
    let start = ContinuousClock.now
    work()
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted[sorted.count / 2]
}

func percentile(_ values: [Int], _ p: Double) -> Int {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
}

let renderer = MarkdownRenderer()
let text = answer(bytes: 50_000)
let stream = pieces(of: text, size: 4)

var full: [Double] = []
for _ in 0..<21 {
    full.append(seconds { _ = renderer.render(text) })
}

var streamed: [Double] = []
var tails: [Int] = []
for run in 0..<7 {
    var markdown = StableMarkdown(renderer: renderer)
    var sizes: [Int] = []
    sizes.reserveCapacity(stream.count)
    streamed.append(seconds {
        for piece in stream {
            let update = markdown.append(piece)
            if run == 0, update.tail != .unchanged { sizes.append(markdown.tail.utf8.count) }
        }
        _ = markdown.finish()
    })
    if run == 0 { tails = sizes }
}

// Re-rendering the whole text on every piece, estimated from 60 evenly spaced prefixes.
var prefixCosts: [Double] = []
let prefixBytes = Array(text.utf8)
for sample in 1...60 {
    let prefix = String(decoding: prefixBytes[..<(prefixBytes.count * sample / 60)], as: UTF8.self)
    prefixCosts.append(seconds { _ = renderer.render(prefix) })
}
let naive = prefixCosts.reduce(0, +) / Double(prefixCosts.count) * Double(stream.count)

let fullMedian = median(full)
let streamedMedian = median(streamed)
print("""
## Streaming Markdown (cmark-gfm), \(text.utf8.count / 1000) KB answer in \(stream.count) pieces of 4 bytes

| | time, ms (median) | ratio to one full render |
|---|---|---|
| one full render | \(String(format: "%.2f", fullMedian * 1000)) | 1× |
| StableMarkdown, all pieces + final reconcile | \(String(format: "%.2f", streamedMedian * 1000)) | \(String(format: "%.1f", streamedMedian / fullMedian))× |
| re-render everything per piece (estimated) | \(String(format: "%.0f", naive * 1000)) | \(String(format: "%.0f", naive / fullMedian))× |

Raw tail sent with each piece: median \(percentile(tails, 0.5)) bytes, p95 \(percentile(tails, 0.95)) bytes, max \(tails.max() ?? 0) bytes.
""")

// MARK: - Long blocks (issue 11)

/// What an html-mode client is sent for one streamed reply: the text of every `block`, `tail` and
/// `tail_append` event (JSON escaping and SSE framing not counted; `events` says how many frames of
/// overhead come on top), and the same with the whole tail re-sent whenever it changed (before
/// issue 11).
struct SentBytes {
    var payload = 0
    var events = 0
    var replaceOnly = 0
}

/// Streams `pieces` once, untimed, counting what an html-mode client is sent.
func sentBytes(_ pieces: [String]) -> (sent: SentBytes, html: Int) {
    var markdown = StableMarkdown(renderer: renderer)
    var sent = SentBytes()
    var previousTail = 0
    for piece in pieces {
        let update = markdown.append(piece)
        for block in update.blocks {
            sent.payload += block.html.utf8.count
            sent.replaceOnly += block.html.utf8.count
            sent.events += 1
        }
        switch update.tail {
        case .unchanged: break
        case .replaced(let tail): sent.payload += tail.utf8.count; sent.events += 1
        case .appended(let text): sent.payload += text.utf8.count; sent.events += 1
        }
        if update.tail != .unchanged {
            let size = markdown.tail.utf8.count
            if !update.blocks.isEmpty || size != previousTail { sent.replaceOnly += size }
            previousTail = size
        }
    }
    for block in markdown.finish().blocks {
        sent.payload += block.html.utf8.count
        sent.replaceOnly += block.html.utf8.count
        sent.events += 1
    }
    return (sent, markdown.blocks.joined().utf8.count)
}

/// The time to stream `pieces` and reconcile, as a generation does it (no snapshot taken).
func streamLong(_ pieces: [String]) -> Double {
    var markdown = StableMarkdown(renderer: renderer)
    return seconds {
        for piece in pieces { _ = markdown.append(piece) }
        _ = markdown.finish()
    }
}

let shapes: [(String, String)] = [
    ("2,000-line code block", LongReplies.codeBlock(lines: 2000)),
    ("1,000-item list", LongReplies.list(items: 1000)),
    ("500-row table", LongReplies.table(rows: 500)),
    ("prose", LongReplies.prose(bytes: 60_000)),
]
var rows: [String] = []
for (name, reply) in shapes {
    let longPieces = pieces(of: reply, size: 12)
    // Interleaved, so that a busy machine weighs on both alike; a render is short (a code block's
    // well under a millisecond), so each sample is the mean of five.
    var renders: [Double] = []
    var runs: [Double] = []
    for _ in 0..<11 {
        renders.append(seconds { for _ in 0..<5 { _ = renderer.render(reply) } } / 5)
        runs.append(streamLong(longPieces))
    }
    let (sent, html) = sentBytes(longPieces)
    let render = median(renders)
    let streamedLong = median(runs)
    rows.append("| \(name) | \(reply.utf8.count / 1000) KB / \(html / 1000) KB | \(longPieces.count) "
        + "| \(String(format: "%.2f", render * 1000)) | \(String(format: "%.1f", streamedLong * 1000)) "
        + "(\(String(format: "%.1f", streamedLong / render))×) "
        + "| \(sent.payload / 1000) KB (\(String(format: "%.1f", Double(sent.payload) / Double(html)))×), \(sent.events) events "
        + "| \(sent.replaceOnly / 1000) KB (\(String(format: "%.0f", Double(sent.replaceOnly) / Double(html)))×) |")
}
print("""

## Long blocks (issue 11), 12-byte pieces, one update per piece (frame interval 0)

| reply | text / final HTML | pieces | one full render, ms | streamed + reconcile, ms (× one render) | html-mode payload sent (× final HTML) | same, whole tail per frame (before) |
|---|---|---|---|---|---|---|
\(rows.joined(separator: "\n"))

Payload: the text of the `block`, `tail` and `tail_append` events, before JSON escaping and SSE
framing (about 60 bytes per event).
""")

// MARK: - Provisional tail (issue 18)

/// Streams `pieces` as a generation does with the provisional render on: after each update the open
/// tail is rendered (`ProvisionalTail`, what `tail_html` carries). Returns the time and the bytes of
/// `tail_html` sent (suffix after `keep`).
func streamProvisional(_ pieces: [String]) -> (seconds: Double, sent: Int) {
    var markdown = StableMarkdown(renderer: renderer)
    var provisional = ProvisionalTail()
    var sent = 0
    let time = seconds {
        for piece in pieces {
            let update = markdown.append(piece)
            if case .html(let suffix, _) = provisional.update(markdown, tailMoved: !update.blocks.isEmpty) {
                sent += suffix?.utf8.count ?? 0
            }
        }
        _ = markdown.finish()
    }
    return (time, sent)
}

var provisionalRows: [String] = []
let provisionalShapes: [(String, String, Int)] = [("realistic answer", text, 4)]
    + shapes.map { ($0.0, $0.1, 12) }
for (name, reply, size) in provisionalShapes {
    let replyPieces = pieces(of: reply, size: size)
    var renders: [Double] = []
    var today: [Double] = []
    var withTail: [Double] = []
    var sent = 0
    for _ in 0..<7 {
        renders.append(seconds { for _ in 0..<5 { _ = renderer.render(reply) } } / 5)
        today.append(streamLong(replyPieces))
        let run = streamProvisional(replyPieces)
        withTail.append(run.seconds)
        sent = run.sent
    }
    let render = median(renders)
    let before = median(today)
    let after = median(withTail)
    let html = renderer.render(reply).utf8.count
    provisionalRows.append("| \(name) | \(size) B | \(String(format: "%.2f", render * 1000)) "
        + "| \(String(format: "%.1f", before * 1000)) (\(String(format: "%.1f", before / render))×) "
        + "| \(String(format: "%.1f", after * 1000)) (\(String(format: "%.1f", after / render))×) "
        + "| \(String(format: "%.1f", (after - before) / render))× "
        + "| \(sent / 1000) KB (\(String(format: "%.1f", Double(sent) / Double(html)))×) |")
}
print("""

## Provisional tail (issue 18): the open tail rendered on every update (`tail_html`)

| reply | piece | one full render, ms | today: streamed + reconcile, ms (×) | with the provisional render, ms (×) | provisional render alone (× one render) | tail_html sent (× final HTML) |
|---|---|---|---|---|---|---|
\(provisionalRows.joined(separator: "\n"))

One update per piece (frame interval 0, the worst case). Goal: the provisional render within 10× one
full render for prose. An open code fence is never rendered provisionally; a tail past 1 KiB is
rendered again only after 25% growth or 1 s (`ReparsePolicy`), and past 16 KiB not at all; all
renders together cost at most 3× the bytes streamed after a 4 KiB start (`ProvisionalTail.budget`).
""")
