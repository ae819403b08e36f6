import CVips
import Foundation
import ParleyMedia

// parley-media-bench: what downscaling a 12-megapixel photo costs (issue 21, run by `make bench`).
// Draws a 4000x3000 picture (gradients plus noise, so the JPEG is photo-like), writes it as a JPEG
// with libvips, then runs it through MediaProcessor (a `parley-media-worker` child per file, as an
// upload does) 15 times, each time with the warm spare ready (PARLEY_MEDIA_SPARES, the default:
// started after the previous file), and 15 times without spares: wall p50/p90 against the goal of
// 150 ms. Then where the time goes, each step timed in this process with the worker's own libvips
// calls: the child's start (a tiny text file through the same pool, with and without a spare), the
// decode (shrink-on-load at 1/2: 2000x1500, JPEGShrinkOnLoad; and, for comparison, the whole decode
// resized to 2048 as before), the 256 px thumbnail and the JPEG encode.
// The worker is the `parley-media-worker` beside this binary (.build/release/), or PARLEY_MEDIA_WORKER.

let runs = 15
let (width, height) = (4000, 3000)

func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
}

func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    let index = min(sorted.count - 1, max(0, Int((Double(sorted.count) * p).rounded(.up)) - 1))
    return sorted[index]
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("parley-media-bench: \(message)\n".utf8))
    exit(1)
}

func vipsError() -> String {
    defer { vips_error_clear() }
    return vips_error_buffer().map { String(cString: $0) } ?? "unknown libvips error"
}

/// Gradients, a checkerboard and per-pixel noise, RGB (as Tests/ParleyMediaTests/MediaFixtures.swift).
func pixels() -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: width * height * 3)
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    bytes.withUnsafeMutableBufferPointer { buffer in
        for y in 0..<height {
            for x in 0..<width {
                state = state &* 6364136223846793005 &+ 1442695040888963407
                let jitter = Int(state >> 56) % 24
                let base = (y * width + x) * 3
                buffer[base] = UInt8(clamping: x * 255 / (width - 1) / 2 + jitter)
                buffer[base + 1] = UInt8(clamping: y * 255 / (height - 1) / 2 + jitter)
                buffer[base + 2] = UInt8(clamping: ((x / 64 + y / 64) % 2) * 120 + jitter)
            }
        }
    }
    return bytes
}

let worker = ProcessInfo.processInfo.environment["PARLEY_MEDIA_WORKER"].map { URL(fileURLWithPath: $0) }
    ?? MediaSettings.besideRunningExecutable
guard FileManager.default.isExecutableFile(atPath: worker.path) else {
    fail("no parley-media-worker at \(worker.path): build it with swift build -c release (or set PARLEY_MEDIA_WORKER)")
}
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-media-bench-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }

guard vips_init("parley-media-bench") == 0 else { fail("libvips cannot start: \(vipsError())") }
let photo = directory.appendingPathComponent("photo.jpg")
do {
    let bytes = pixels()
    guard let image = bytes.withUnsafeBytes({
        vips_image_new_from_memory_copy($0.baseAddress, $0.count, Int32(width), Int32(height), 3, VIPS_FORMAT_UCHAR)
    }) else { fail("vips cannot wrap the pixels: \(vipsError())") }
    defer { g_object_unref(UnsafeMutableRawPointer(image)) }
    guard parley_vips_write_file(image, photo.path + "[Q=90]") == 0 else { fail("vips cannot write the JPEG: \(vipsError())") }
}
let photoBytes = (try FileManager.default.attributesOfItem(atPath: photo.path)[.size] as? Int) ?? 0
let text = directory.appendingPathComponent("note.txt")
try Data("a few words\n".utf8).write(to: text)

let settings = MediaSettings(workerExecutable: worker, scratchDirectory: directory)
let processor = MediaProcessor(settings: settings)
var coldSettings = settings
coldSettings.spares = 0
let cold = MediaProcessor(settings: coldSettings)

/// One file through the worker, timed; returns wall milliseconds and what it made. With `spare`,
/// first waits (up to 5 s) for the warm spare, as an upload after a pause finds it.
func timed(_ input: URL, _ name: String, spare: Bool = true) async -> (Double, ProcessedMedia) {
    if spare {
        for _ in 0..<500 where processor.readySpares.isEmpty { try? await Task.sleep(for: .milliseconds(10)) }
    }
    let start = ContinuousClock.now
    do {
        let media = try await (spare ? processor : cold).process(input, filename: name)
        let elapsed = milliseconds(ContinuousClock.now - start)
        try? FileManager.default.removeItem(at: media.workDirectory)
        return (elapsed, media)
    } catch {
        fail("the worker refused \(name): \(error)")
    }
}

// One warm-up each (page cache, dynamic loader, the first spare), then the measured runs.
_ = await timed(photo, "photo.jpg")
_ = await timed(text, "note.txt")
var walls: [Double] = [], coldWalls: [Double] = []
var made: ProcessedMedia?
for _ in 0..<runs {
    let (ms, media) = await timed(photo, "photo.jpg")
    walls.append(ms)
    made = media
    coldWalls.append(await timed(photo, "photo.jpg", spare: false).0)
}
var spawns: [Double] = [], coldSpawns: [Double] = []
for _ in 0..<runs {
    spawns.append(await timed(text, "note.txt").0)
    coldSpawns.append(await timed(text, "note.txt", spare: false).0)
}
processor.shutdown()

// In this process, the worker's libvips steps one by one (same calls, same options).
vips_cache_set_max(0)
var decodes: [Double] = [], wholeDecodes: [Double] = [], thumbnails: [Double] = [], encodes: [Double] = []
var encodedBytes = 0
for _ in 0..<runs {
    var start = ContinuousClock.now
    var whole: UnsafeMutablePointer<VipsImage>?
    guard parley_vips_thumbnail_file(photo.path, &whole, 2048) == 0, let whole,
          let wholeImage = vips_image_copy_memory(whole) else { fail("whole decode: \(vipsError())") }
    g_object_unref(UnsafeMutableRawPointer(wholeImage))
    g_object_unref(UnsafeMutableRawPointer(whole))
    wholeDecodes.append(milliseconds(ContinuousClock.now - start))
    start = ContinuousClock.now
    var out: UnsafeMutablePointer<VipsImage>?
    guard parley_vips_thumbnail_jpeg(photo.path, &out, 2048, 2) == 0, let shrunk = out,
          let image = vips_image_copy_memory(shrunk) else { fail("decode: \(vipsError())") }
    g_object_unref(UnsafeMutableRawPointer(shrunk))
    decodes.append(milliseconds(ContinuousClock.now - start))
    start = ContinuousClock.now
    var small: UnsafeMutablePointer<VipsImage>?
    var buffer: UnsafeMutableRawPointer?
    var length = 0
    guard parley_vips_thumbnail_small(image, &small, 256) == 0, let small, let thumb = vips_image_copy_memory(small),
          parley_vips_jpeg(thumb, &buffer, &length, 80) == 0 else { fail("thumbnail: \(vipsError())") }
    g_free(buffer)
    g_object_unref(UnsafeMutableRawPointer(thumb))
    g_object_unref(UnsafeMutableRawPointer(small))
    thumbnails.append(milliseconds(ContinuousClock.now - start))
    start = ContinuousClock.now
    guard parley_vips_jpeg(image, &buffer, &length, 85) == 0 else { fail("encode: \(vipsError())") }
    encodes.append(milliseconds(ContinuousClock.now - start))
    encodedBytes = length
    g_free(buffer)
    g_object_unref(UnsafeMutableRawPointer(image))
}

func row(_ name: String, _ values: [Double]) -> String {
    "| \(name) | \(String(format: "%.0f", percentile(values, 0.5))) | \(String(format: "%.0f", percentile(values, 0.9))) |"
}
let load = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").prefix(3).joined(separator: " ") ?? "?"
let cores = ProcessInfo.processInfo.activeProcessorCount
print("""
## 12-megapixel JPEG downscale (issue 21)

\(width)x\(height) JPEG (Q90, gradients and noise, \(photoBytes / 1024) KiB) uploaded through MediaProcessor: \
one `parley-media-worker` child per file (\(worker.path)), within \(settings.imageMaxEdge) px on the long \
edge (decoded at 1/2 by libjpeg), re-encoded as JPEG Q85 (\(made.map { "\($0.width ?? 0)x\($0.height ?? 0)" } ?? "?"), \
\(encodedBytes / 1024) KiB) with a 256 px thumbnail. \(runs) runs of each after one warm-up; \(cores) cores, \
load average \(load). Goal: p50 <= 150 ms.

| step | p50 ms | p90 ms |
|:--|--:|--:|
\(row("**whole upload through the worker, warm spare ready (wall)**", walls))
\(row("whole upload through a worker started on demand (wall)", coldWalls))
\(row("worker start and reply, tiny text file, warm spare (wall)", spawns))
\(row("worker start and reply, tiny text file, started on demand (wall)", coldSpawns))
\(row("decode shrunk on load to 2000 (in process)", decodes))
\(row("decode whole, resized to 2048, as before (in process)", wholeDecodes))
\(row("256 px thumbnail (in process)", thumbnails))
\(row("JPEG Q85 encode of 2000 px (in process)", encodes))

""")
