import Foundation
import ParleyA2UI
import ParleyPrimitives

// `make bench` (issue 22): what validating A2UI costs on the server. Per message: a typical surface's
// messages (create, components, data) read from streaming arguments (yajl) and judged by the board.
// Per surface: one updateComponents of `PARLEY_SURFACE_MAX_COMPONENTS` (500) components judged whole.
// Medians of repeated runs; goals ≤ 0.1 ms per message and ≤ 10 ms per 500-component surface.

let catalog = "https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"

func message(_ kind: String, _ body: [String: JSON]) -> JSON { .object(["version": .string("v0.9"), kind: .object(body)]) }

func component(_ index: Int) -> JSON {
    let id = JSON.string("c\(index)")
    switch index % 5 {
    case 0: return .object(["id": id, "component": .string("Text"), "text": .string("Line \(index) of the answer")])
    case 1: return .object(["id": id, "component": .string("TextField"), "label": .string("Field \(index)"),
                            "value": .object(["path": .string("/form/f\(index)")])])
    case 2: return .object(["id": id, "component": .string("CheckBox"), "label": .string("Option \(index)"),
                            "value": .object(["path": .string("/form/b\(index)")])])
    case 3: return .object(["id": id, "component": .string("Icon"), "name": .string("star")])
    default: return .object(["id": id, "component": .string("Divider")])
    }
}

func surface(_ id: String, components count: Int) -> [JSON] {
    let root = JSON.object(["id": .string("root"), "component": .string("Column"),
                            "children": .array((0..<(count - 1)).map { .string("c\($0)") })])
    return [message("createSurface", ["surfaceId": .string(id), "catalogId": .string(catalog)]),
            message("updateComponents", ["surfaceId": .string(id),
                                         "components": .array([root] + (0..<(count - 1)).map(component))]),
            message("updateDataModel", ["surfaceId": .string(id), "path": .string("/form"),
                                        "value": .object(["f1": .string("Ada"), "b2": .bool(true)])])]
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

func milliseconds(_ work: () -> Void) -> Double {
    let start = ContinuousClock.now
    work()
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
}

let images = ImagePolicy { _ in true }
// Per message: 200 surfaces of 8 components, 3 messages each, as one render_ui call's arguments in 40-byte fragments.
let messages = (0..<200).flatMap { surface("s\($0)", components: 8) }
let arguments = JSON.object(["messages": .array(messages)]).text
let bytes = Array(arguments.utf8)
let fragments = stride(from: 0, to: bytes.count, by: 40).map { Array(bytes[$0..<min($0 + 40, bytes.count)]) }
var perMessage: [Double] = []
var perMessageApply: [Double] = []
for _ in 0..<21 {
    var sent = 0
    perMessage.append(milliseconds {
        var board = SurfaceBoard(limits: SurfaceLimits(), images: images)
        let extractor = MessageExtractor(limits: SurfaceLimits())
        for fragment in fragments {
            for case .message(let json) in extractor.feed(utf8: fragment) {
                if case .emitted(let out) = board.apply(json) { sent += out.count }
            }
        }
    } / Double(messages.count))
    precondition(sent == messages.count, "every message valid: \(sent)")
    perMessageApply.append(milliseconds {
        var board = SurfaceBoard(limits: SurfaceLimits(), images: images)
        for json in messages { _ = board.apply(json) }
    } / Double(messages.count))
}
// A 500-component surface, judged whole (one updateComponents), and read from its arguments.
let big = surface("big", components: 500)
let bigArguments = Array(JSON.object(["messages": .array(big)]).text.utf8)
var perSurface: [Double] = []
var perSurfaceRead: [Double] = []
for _ in 0..<21 {
    perSurface.append(milliseconds {
        var board = SurfaceBoard(limits: SurfaceLimits(), images: images)
        _ = board.apply(big[0])
        guard case .emitted = board.apply(big[1]) else { fatalError("the 500-component surface was refused") }
    })
    perSurfaceRead.append(milliseconds {
        var board = SurfaceBoard(limits: SurfaceLimits(), images: images)
        let extractor = MessageExtractor(limits: SurfaceLimits())
        for case .message(let json) in extractor.feed(utf8: bigArguments) + extractor.finish() { _ = board.apply(json) }
    })
}
print("| A2UI validation (median of 21 runs, release build) | measured | goal |")
print("|---|---|---|")
print(String(format: "| per message, judged (createSurface, 8 components, data) | %.4f ms | ≤ 0.1 ms |", median(perMessageApply)))
print(String(format: "| per message, read from streamed arguments (yajl, 40-byte fragments) and judged | %.4f ms | ≤ 0.1 ms |", median(perMessage)))
print(String(format: "| 500-component surface, one updateComponents judged | %.2f ms | ≤ 10 ms |", median(perSurface)))
print(String(format: "| 500-component surface read from its arguments (%d KiB) and judged | %.2f ms | ≤ 10 ms |",
             bigArguments.count / 1024, median(perSurfaceRead)))
