import Foundation
import ParleyMedia

/// The child's image step: refuse decompression bombs from the header alone, decode (autorotated by
/// EXIF orientation, shrunk to the long-edge limit, a large JPEG shrunk on load: `JPEGShrinkOnLoad`),
/// re-encode without any metadata (so no EXIF GPS)
/// in the same format (a GIF becomes its first frame as PNG), smaller until it fits the byte limit,
/// and make a thumbnail. Runs in `MediaWorker` only.
struct ImageTranscoder {
    let request: MediaRequest

    /// Long edge of the thumbnail, in pixels.
    static let thumbnailEdge = 256
    /// JPEG/WebP quality of the first try, the lowest tried, and the step between tries.
    static let startQuality = 85
    static let lowestQuality = 55
    static let qualityStep = 15

    func run(_ format: SniffedFormat) throws(MediaError) -> ProcessedMedia {
        let header = try VipsImageHandle.header(request.input)
        var frames = header.pages
        if format == .gif, let data = try? Data(contentsOf: URL(fileURLWithPath: request.input), options: .alwaysMapped) {
            frames = max(frames, GIFFrameCount.count(data) ?? 0)
        }
        let (pixels, overflow) = header.width.multipliedReportingOverflow(by: header.height)
        let (total, overflowFrames) = pixels.multipliedReportingOverflow(by: frames)
        if overflow || overflowFrames || total > request.imageMaxPixels {
            throw .tooManyPixels(overflow || overflowFrames ? Int.max : total)
        }
        let shrink = format == .jpeg
            ? JPEGShrinkOnLoad.factor(longEdge: max(header.width, header.height), maxEdge: request.imageMaxEdge) : 1
        let image = try VipsImageHandle.decoded(request.input, edge: request.imageMaxEdge,
                                                jpegShrink: shrink > 1 ? shrink : nil)
        let thumbnail = try makeThumbnail(image)
        let directory = URL(fileURLWithPath: request.outputDirectory)
        switch request.mode {
        case .verify:
            // The bytes are stored as given, so they must already be what an upload stores.
            let size = (try? FileManager.default.attributesOfItem(atPath: request.input)[.size] as? Int) ?? nil
            if max(header.width, header.height) > request.imageMaxEdge || (size ?? 0) > request.imageMaxBytes {
                throw .tooManyPixels(pixels)
            }
            return ProcessedMedia(kind: .image, mediaType: format.mediaType, content: URL(fileURLWithPath: request.input),
                                  width: header.width, height: header.height, thumbnail: thumbnail.url,
                                  thumbnailMediaType: thumbnail.mediaType, workDirectory: directory)
        case .upload:
            let (stored, mediaType, ext) = try fitted(image, format)
            let content = request.output("content.\(ext)")
            try write(stored.data, to: content)
            return ProcessedMedia(kind: .image, mediaType: mediaType, content: content,
                                  width: stored.image.width, height: stored.image.height, thumbnail: thumbnail.url,
                                  thumbnailMediaType: thumbnail.mediaType, workDirectory: directory)
        }
    }

    /// Encodes `image` as its format (GIF as PNG); past the byte limit, JPEG and WebP first lose
    /// quality, then every format loses size, until the bytes fit.
    private func fitted(_ image: VipsImageHandle, _ format: SniffedFormat)
        throws(MediaError) -> (stored: (data: Data, image: VipsImageHandle), mediaType: String, ext: String) {
        var current = image
        var quality = Self.startQuality
        for _ in 0..<16 {
            let data: Data
            let mediaType: String
            let ext: String
            switch format {
            case .jpeg: (data, mediaType, ext) = (try current.encoded(.jpeg(quality: quality)), "image/jpeg", "jpg")
            case .webp: (data, mediaType, ext) = (try current.encoded(.webp(quality: quality)), "image/webp", "webp")
            default: (data, mediaType, ext) = (try current.encoded(.png), "image/png", "png")
            }
            if data.count <= request.imageMaxBytes { return ((data, current), mediaType, ext) }
            let lossy = format == .jpeg || format == .webp
            if lossy, quality - Self.qualityStep >= Self.lowestQuality {
                quality -= Self.qualityStep
                continue
            }
            // Bytes grow about with the area: aim under the limit by the square root, at least 10 % off.
            let factor = min(0.9, (Double(request.imageMaxBytes) / Double(data.count)).squareRoot() * 0.95)
            let edge = Int(Double(max(current.width, current.height)) * factor)
            guard edge >= 16 else { break }
            current = try current.shrunk(to: edge)
        }
        throw .unreadable("the image cannot be made to fit \(request.imageMaxBytes) bytes")
    }

    /// A JPEG thumbnail, or PNG when the image has transparency.
    private func makeThumbnail(_ image: VipsImageHandle) throws(MediaError) -> (url: URL, mediaType: String) {
        let small = try image.thumbnail(edge: Self.thumbnailEdge)
        let (data, mediaType, name) = small.hasAlpha
            ? (try small.encoded(.png), "image/png", "thumbnail.png")
            : (try small.encoded(.jpeg(quality: 80)), "image/jpeg", "thumbnail.jpg")
        let url = request.output(name)
        try write(data, to: url)
        return (url, mediaType)
    }

    private func write(_ data: Data, to url: URL) throws(MediaError) {
        do {
            try data.write(to: url)
        } catch {
            throw .unreadable("cannot write the result (\(data.count) bytes): \(error.localizedDescription)")
        }
    }
}
