import CVips
import Foundation
import XCTest

/// Files the tests make themselves, each noted with where it comes from: images drawn in Swift and
/// encoded by libvips (`parley_vips_write_file`), hostile files written byte by byte here.
enum MediaFixtures {
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    /// The worker executable, built by `swift build --build-tests` beside the test bundle.
    static let worker = repositoryRoot.appendingPathComponent(".build/debug/parley-media-worker")

    /// A fresh directory removed by the test's teardown.
    static func directory(_ test: XCTestCase) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("parley-media-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        test.addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        return url
    }

    // MARK: - Images drawn here, encoded by libvips

    /// A `width` x `height` picture: gradients plus deterministic noise (`noise` 0...255), so encoders
    /// have real work and JPEG sizes are photo-like. `bands` 3 (RGB) or 4 (RGBA, half transparent).
    /// A negative `noise` gives a flat grey picture, made at once (for sizes where drawing is slow).
    static func pixels(width: Int, height: Int, bands: Int = 3, noise: Int = 24) -> [UInt8] {
        if noise < 0 { return [UInt8](repeating: 128, count: width * height * bands) }
        var bytes = [UInt8](repeating: 0, count: width * height * bands)
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for y in 0..<height {
            for x in 0..<width {
                state = state &* 6364136223846793005 &+ 1442695040888963407
                let jitter = noise > 0 ? Int(state >> 56) % noise : 0
                let base = (y * width + x) * bands
                bytes[base] = UInt8(clamping: x * 255 / max(1, width - 1) / 2 + jitter)
                bytes[base + 1] = UInt8(clamping: y * 255 / max(1, height - 1) / 2 + jitter)
                bytes[base + 2] = UInt8(clamping: ((x / 64 + y / 64) % 2) * 120 + jitter)
                if bands == 4 { bytes[base + 3] = x < width / 2 ? 255 : 80 }
            }
        }
        return bytes
    }

    /// Encodes drawn pixels with libvips; `name` picks format and options ("a.jpg[Q=90]").
    @discardableResult
    static func image(_ name: String, in directory: URL, width: Int, height: Int, bands: Int = 3,
                      noise: Int = 24) throws -> URL {
        let bytes = pixels(width: width, height: height, bands: bands, noise: noise)
        XCTAssertEqual(vips_init("parley-tests"), 0)
        let image = bytes.withUnsafeBytes {
            vips_image_new_from_memory_copy($0.baseAddress, $0.count, Int32(width), Int32(height), Int32(bands),
                                            VIPS_FORMAT_UCHAR)
        }
        guard let image else { throw Failure("vips cannot wrap the pixels") }
        defer { g_object_unref(UnsafeMutableRawPointer(image)) }
        let path = directory.appendingPathComponent(name).path
        guard parley_vips_write_file(image, path) == 0 else { throw Failure("vips cannot write \(name)") }
        let plain = name.split(separator: "[").first.map(String.init) ?? name
        return directory.appendingPathComponent(plain)
    }

    /// Width, height and whether EXIF data is present, as libvips reads the file's header.
    static func header(_ url: URL) throws -> (width: Int, height: Int, exif: Bool, gps: Bool) {
        guard let image = parley_vips_open_header(url.path) else { throw Failure("vips cannot read \(url.lastPathComponent)") }
        defer { g_object_unref(UnsafeMutableRawPointer(image)) }
        return (Int(vips_image_get_width(image)), Int(vips_image_get_height(image)),
                vips_image_get_typeof(image, "exif-data") != 0,
                vips_image_get_typeof(image, "exif-ifd3-GPSLatitude") != 0)
    }

    // MARK: - EXIF written by hand

    /// Inserts an APP1 Exif segment after a JPEG's SOI: IFD0 with Orientation (`orientation`) and a
    /// GPS IFD holding GPSLatitudeRef "N" and GPSLatitude 48/1 51/1 29/1 (Paris). Little-endian TIFF.
    static func addingEXIF(toJPEG jpeg: Data, orientation: UInt16) -> Data {
        var tiff: [UInt8] = Array("II".utf8) + le16(42) + le32(8)
        // IFD0 at 8: 2 entries (12 bytes each) + next-IFD 0 = 2 + 24 + 4 = 30 bytes, ends at 38.
        tiff += le16(2)
        tiff += le16(0x0112) + le16(3) + le32(1) + le16(orientation) + le16(0)   // Orientation, SHORT
        tiff += le16(0x8825) + le16(4) + le32(1) + le32(38)                      // GPSInfo IFD pointer
        tiff += le32(0)
        // GPS IFD at 38: 2 entries + next 0 = 30 bytes, ends at 68, where the rationals go.
        tiff += le16(2)
        tiff += le16(0x0001) + le16(2) + le32(2) + Array("N".utf8) + [0, 0, 0]    // GPSLatitudeRef, ASCII "N\0"
        tiff += le16(0x0002) + le16(5) + le32(3) + le32(68)                      // GPSLatitude, 3 RATIONAL
        tiff += le32(0)
        tiff += le32(48) + le32(1) + le32(51) + le32(1) + le32(29) + le32(1)
        let payload = Array("Exif".utf8) + [0, 0] + tiff
        let length = payload.count + 2
        let segment: [UInt8] = [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
        var bytes = [UInt8](jpeg)
        bytes.insert(contentsOf: segment, at: 2)
        return Data(bytes)
    }

    private static func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
    private static func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8((value >> (8 * $0)) & 0xFF) } }
    static func be32(_ value: UInt32) -> [UInt8] { (0..<4).reversed().map { UInt8((value >> (8 * $0)) & 0xFF) } }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
