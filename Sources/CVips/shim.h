#include <vips/vips.h>

/* libvips' operations take their options as NULL-terminated varargs, which Swift cannot call: each
 * call ParleyMedia makes is one fixed-argument function here. Every loader is asked to fail on a
 * truncated file (the default fills the rest with grey) and every saver strips all metadata. */

static inline int parley_vips_init(void) { return vips_init("parley"); }

/* Opens the header only (nothing is decoded until pixels are asked for). */
static inline VipsImage *parley_vips_open_header(const char *path) {
    return vips_image_new_from_file(path, "access", VIPS_ACCESS_SEQUENTIAL, NULL);
}

/* Decodes, autorotates by EXIF orientation and shrinks (never enlarges) to `edge` on the long edge,
 * with shrink-on-load where the format has one (JPEG, WebP). */
static inline int parley_vips_thumbnail_file(const char *path, VipsImage **out, int edge) {
    return vips_thumbnail(path, out, edge, "height", edge, "size", VIPS_SIZE_DOWN,
                          "fail_on", VIPS_FAIL_ON_TRUNCATED, NULL);
}

/* JPEG only: libjpeg decodes at 1/`shrink` of the size (1, 2, 4 or 8: shrink-on-load, chosen by
 * JPEGShrinkOnLoad), then the image is autorotated by EXIF orientation, colour-handled and shrunk
 * (never enlarged) the rest of the way to `edge` exactly as vips_thumbnail does. vips_thumbnail itself
 * only shrinks on load when 2x or more is left over for its resize, so never for 4000 -> 2048. */
static inline int parley_vips_thumbnail_jpeg(const char *path, VipsImage **out, int edge, int shrink) {
    VipsImage *loaded = NULL;
    if (vips_jpegload(path, &loaded, "shrink", shrink, "access", VIPS_ACCESS_SEQUENTIAL,
                      "fail_on", VIPS_FAIL_ON_TRUNCATED, NULL)) return -1;
    int status = vips_thumbnail_image(loaded, out, edge, "height", edge, "size", VIPS_SIZE_DOWN, NULL);
    g_object_unref(loaded);
    return status;
}

static inline int parley_vips_thumbnail_image(VipsImage *in, VipsImage **out, int edge) {
    return vips_thumbnail_image(in, out, edge, "height", edge, "size", VIPS_SIZE_DOWN, NULL);
}

/* The thumbnail: shrunk (never enlarged) to `edge` on the long edge by a box shrink of the whole
 * factor, then lanczos3 for the rest (vips_resize's "gap" 0). vips_thumbnail_image keeps a factor of
 * two for lanczos3 (gap 2), which costs about 2.5x the CPU (50 against 20 ms from 2000 px) for no
 * difference a 256 px thumbnail shows. Alpha is premultiplied around the resize, as
 * vips_thumbnail_image does, so transparent pixels do not bleed into their neighbours. */
static inline int parley_vips_thumbnail_small(VipsImage *in, VipsImage **out, int edge) {
    int longest = in->Xsize > in->Ysize ? in->Xsize : in->Ysize;
    if (longest <= edge) return vips_copy(in, out, NULL);
    double scale = (double)edge / longest;
    if (!vips_image_hasalpha(in)) return vips_resize(in, out, scale, "gap", 0.0, NULL);
    VipsImage *premultiplied = NULL, *resized = NULL, *unpremultiplied = NULL;
    int status = vips_premultiply(in, &premultiplied, NULL)
        || vips_resize(premultiplied, &resized, scale, "gap", 0.0, NULL)
        || vips_unpremultiply(resized, &unpremultiplied, NULL)
        || vips_cast(unpremultiplied, out, in->BandFmt, NULL);
    if (premultiplied) g_object_unref(premultiplied);
    if (resized) g_object_unref(resized);
    if (unpremultiplied) g_object_unref(unpremultiplied);
    return status ? -1 : 0;
}

static inline int parley_vips_jpeg(VipsImage *in, void **buffer, size_t *length, int quality) {
    return vips_jpegsave_buffer(in, buffer, length, "Q", quality, "strip", TRUE, "optimize_coding", TRUE, NULL);
}

static inline int parley_vips_png(VipsImage *in, void **buffer, size_t *length) {
    return vips_pngsave_buffer(in, buffer, length, "strip", TRUE, "compression", 6, NULL);
}

static inline int parley_vips_webp(VipsImage *in, void **buffer, size_t *length, int quality) {
    return vips_webpsave_buffer(in, buffer, length, "Q", quality, "strip", TRUE, NULL);
}

/* Saves to a file, the format and its options chosen by the name ("x.jpg[Q=90]"); no stripping.
 * ParleyMediaTests make their fixture images with it. */
static inline int parley_vips_write_file(VipsImage *in, const char *path) {
    return vips_image_write_to_file(in, path, NULL);
}
