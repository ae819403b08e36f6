import CVips
import Foundation
import ParleyMedia

/// One libvips image, unreferenced when the handle goes. libvips is touched only in the child
/// (`MediaWorker`), on its one thread, so handles never cross threads and are not Sendable.
final class VipsImageHandle {
    let pointer: UnsafeMutablePointer<VipsImage>

    init(_ pointer: UnsafeMutablePointer<VipsImage>) {
        self.pointer = pointer
    }

    deinit {
        g_object_unref(UnsafeMutableRawPointer(pointer))
    }

    var width: Int { Int(vips_image_get_width(pointer)) }
    var height: Int { Int(vips_image_get_height(pointer)) }
    /// Frames of an animation (1 for a still image), as the header says.
    var pages: Int { max(1, Int(vips_image_get_n_pages(pointer))) }
    var hasAlpha: Bool { vips_image_hasalpha(pointer) != 0 }

    /// Opens the header only; pixels are decoded when asked for.
    static func header(_ path: String) throws(MediaError) -> VipsImageHandle {
        guard let image = parley_vips_open_header(path) else { throw .unreadable(lastError("cannot read the image")) }
        return VipsImageHandle(image)
    }

    /// Decodes `path` autorotated and shrunk to `edge` (never enlarged), held in memory so it can be
    /// encoded more than once. A truncated or corrupt file fails here. `jpegShrink` (a JPEG only:
    /// 2, 4 or 8) has libjpeg decode at that fraction of the size first (`JPEGShrinkOnLoad`).
    static func decoded(_ path: String, edge: Int, jpegShrink: Int? = nil) throws(MediaError) -> VipsImageHandle {
        var out: UnsafeMutablePointer<VipsImage>?
        let status = if let jpegShrink {
            parley_vips_thumbnail_jpeg(path, &out, Int32(clamping: edge), Int32(clamping: jpegShrink))
        } else {
            parley_vips_thumbnail_file(path, &out, Int32(clamping: edge))
        }
        guard status == 0, let out else {
            throw .unreadable(lastError("cannot decode the image"))
        }
        return try VipsImageHandle(out).inMemory()
    }

    /// This image shrunk to `edge` on its long edge (never enlarged), in memory.
    func shrunk(to edge: Int) throws(MediaError) -> VipsImageHandle {
        var out: UnsafeMutablePointer<VipsImage>?
        guard parley_vips_thumbnail_image(pointer, &out, Int32(clamping: edge)) == 0, let out else {
            throw .unreadable(Self.lastError("cannot resize the image"))
        }
        return try VipsImageHandle(out).inMemory()
    }

    /// The thumbnail: this image shrunk to `edge` (never enlarged) the cheaper way
    /// (`parley_vips_thumbnail_small`), in memory.
    func thumbnail(edge: Int) throws(MediaError) -> VipsImageHandle {
        var out: UnsafeMutablePointer<VipsImage>?
        guard parley_vips_thumbnail_small(pointer, &out, Int32(clamping: edge)) == 0, let out else {
            throw .unreadable(Self.lastError("cannot make the thumbnail"))
        }
        return try VipsImageHandle(out).inMemory()
    }

    private func inMemory() throws(MediaError) -> VipsImageHandle {
        guard let copy = vips_image_copy_memory(pointer) else { throw .unreadable(Self.lastError("cannot decode the image")) }
        return VipsImageHandle(copy)
    }

    // MARK: - Encoding (all metadata stripped)

    enum Encoding {
        case jpeg(quality: Int)
        case png
        case webp(quality: Int)
    }

    func encoded(_ encoding: Encoding) throws(MediaError) -> Data {
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        let status: Int32 = switch encoding {
        case .jpeg(let quality): parley_vips_jpeg(pointer, &buffer, &length, Int32(quality))
        case .png: parley_vips_png(pointer, &buffer, &length)
        case .webp(let quality): parley_vips_webp(pointer, &buffer, &length, Int32(quality))
        }
        guard status == 0, let buffer else { throw .unreadable(Self.lastError("cannot encode the image")) }
        defer { g_free(buffer) }
        return Data(bytes: buffer, count: length)
    }

    /// libvips' error text (its last line: the buffer may hold several), cleared for the next call.
    static func lastError(_ fallback: String) -> String {
        defer { vips_error_clear() }
        guard let text = vips_error_buffer() else { return fallback }
        let lines = String(cString: text).split(separator: "\n").map(String.init)
        return lines.last.map { "\(fallback): \($0)" } ?? fallback
    }
}
