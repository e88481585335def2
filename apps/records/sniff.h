/*
 * sniff.h: the content type a file of the records API is checked and served as, read
 * from its bytes and its stored name, never from what the client said.
 *
 * The bytes decide first: the signatures of PNG, JPEG, GIF, WebP, AVIF, ICO, PDF, ZIP,
 * gzip, MP4, WebM, Ogg, MP3 and WAV.  Then text (UTF-8 without NULs or control bytes
 * but tab, CR, LF and form feed, in the first SNIFF_PEEK bytes) is markup when, past
 * blanks and a BOM, it opens with '<' and names html, svg, xml or script among its first
 * bytes: text/html, image/svg+xml or application/xml, whatever the name says; other text
 * takes its extension's type (json, csv, css, md, txt, and html, svg, xml, js as active)
 * or text/plain; anything else is application/octet-stream.
 *
 * A type is "active" when a browser would run what it holds on the site's origin (HTML,
 * SVG, XML, JavaScript): such a file is to be served as an attachment or sandboxed,
 * never inline as is.
 */
#ifndef SLUICE_RECORDS_SNIFF_H
#define SLUICE_RECORDS_SNIFF_H

#include <stddef.h>

#define SNIFF_PEEK	512	/* bytes of a file's start that sniff_type() reads */

/*
 * The content type of a file named name[0..nlen) (its stored name, fname.h) whose first
 * bytes are data[0..len) (at most SNIFF_PEEK are read): a static string such as
 * "image/png" or "text/plain; charset=utf-8".  *active is set to 1 for an active type,
 * else 0.  Never fails.
 */
const char *sniff_type(const char *name, size_t nlen, const unsigned char *data, size_t len,
    int *active);

#endif
