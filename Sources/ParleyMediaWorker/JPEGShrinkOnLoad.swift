/// Which 1/n scale libjpeg decodes a JPEG at (shrink-on-load): decoding at 1/2 reads the same file
/// but skips three quarters of the IDCT, colour and resize work, which is most of an upload's time.
///
/// The rule: the smallest scale (8, 4, 2, else 1) whose long edge is still at least `floor` (90 %) of
/// the limit. Past the limit, the rest is a normal resize down to it; below it, the image is stored
/// at that size, at most 10 % short of the limit. So a 4000x3000 photo with the 2048 limit is
/// decoded at 1/2 and stored at 2000x1500 (97.7 % of the limit) instead of being decoded whole and
/// resized to 2048x1536; 6000x4000 is decoded at 1/2 and resized from 3000 to 2048; 3000x2000
/// (1/2 would be 1500, 73 %) is decoded whole. An image within the limit is never shrunk (half of
/// it is under half the limit). Both providers see no difference: OpenAI fits an image into 2048 and
/// then 768 on the short side, Anthropic resizes past 1568 on the long edge.
enum JPEGShrinkOnLoad {
    /// The fraction of the limit a shrunk-on-load long edge must keep.
    static let floor = 0.9

    /// The scale divisor (1, 2, 4 or 8) for a JPEG whose long edge is `longEdge`, stored within `maxEdge`.
    static func factor(longEdge: Int, maxEdge: Int) -> Int {
        for shrink in [8, 4, 2] {
            // libjpeg rounds a scaled size up.
            let scaled = (longEdge + shrink - 1) / shrink
            if Double(scaled) >= floor * Double(maxEdge) { return shrink }
        }
        return 1
    }
}
