"""Assets: images without alt, heavy or broken images and resources, unknown sizes."""

from __future__ import annotations

from collections.abc import Iterator

from fairfetch.audit.rules.base import Thresholds, rule
from fairfetch.audit.view import ResourceRow, SiteView

Out = Iterator[tuple[str, str] | str]


#: Errors that say the asset was not checked (the perimeter refused it, its server throttled
#: us, the site's robots.txt disallows it or cannot be read): counted as not checked, not a
#: verdict on the asset.
NOT_CHECKED_ERRORS = ("perimeter:", "throttled:", "robots:", "robots_unreachable:")


def _broken(r: ResourceRow) -> bool:
    if r.error is not None and r.error.startswith(NOT_CHECKED_ERRORS):
        return False
    return (r.status is not None and r.status >= 400) or (r.status is None and bool(r.error))


def _what(r: ResourceRow) -> str:
    return str(r.status) if r.status is not None else (r.error or "no response")


@rule("image-missing-alt", "assets", "warning", "Image without alt text",
      explanation="Screen readers and image search rely on alt text (alt=\"\" marks an image "
      "as decorative and is fine).",
      fix="Add alt text describing the image.")
def image_missing_alt(site: SiteView, t: Thresholds) -> Out:
    for use in site.image_uses:
        if use.alt is None:
            yield use.page_url, use.image_url


@rule("image-missing-dimensions", "assets", "notice", "Image without width/height",
      explanation="Undeclared dimensions make the layout jump while the page loads (CLS).",
      fix="Declare width and height on <img>.")
def image_missing_dimensions(site: SiteView, t: Thresholds) -> Out:
    for use in site.image_uses:
        if not use.width or not use.height:
            yield use.page_url, use.image_url


@rule("heavy-image", "assets", "warning", "Heavy image",
      explanation="Large images slow every page that shows them.",
      fix="Compress, resize, or serve a modern format (WebP/AVIF).")
def heavy_image(site: SiteView, t: Thresholds) -> Out:
    for img in site.images:
        if img.size is not None and img.size > t.heavy_image_bytes:
            yield img.url, f"{img.size} bytes on {img.pages} page(s)"


@rule("broken-image", "assets", "error", "Broken image",
      explanation="An image the page shows answers 4xx/5xx or does not load.",
      fix="Fix the image URL or restore the file.")
def broken_image(site: SiteView, t: Thresholds) -> Out:
    for img in site.images:
        if _broken(img):
            yield img.url, f"{_what(img)} on {img.pages} page(s)"


@rule("broken-css", "assets", "error", "Broken stylesheet",
      explanation="A stylesheet the page loads is missing; the page renders unstyled.",
      fix="Fix the stylesheet URL or restore the file.")
def broken_css(site: SiteView, t: Thresholds) -> Out:
    for r in site.resources:
        if r.type == "css" and _broken(r):
            yield r.url, f"{_what(r)} on {r.pages} page(s)"


@rule("broken-js", "assets", "error", "Broken script",
      explanation="A script the page loads is missing; features depending on it break.",
      fix="Fix the script URL or restore the file.")
def broken_js(site: SiteView, t: Thresholds) -> Out:
    for r in site.resources:
        if r.type == "js" and _broken(r):
            yield r.url, f"{_what(r)} on {r.pages} page(s)"


@rule("broken-resource", "assets", "warning", "Broken font, media, icon, srcset image or frame",
      explanation="A font, media file, icon, responsive image variant (srcset) or frame the "
      "page loads is missing.",
      fix="Fix the URL or restore the file.")
def broken_resource(site: SiteView, t: Thresholds) -> Out:
    for r in site.resources:
        if r.type not in ("css", "js") and _broken(r):
            yield r.url, f"{_what(r)} on {r.pages} page(s)"


@rule("heavy-resource", "assets", "warning", "Heavy resource served on many pages",
      explanation="A large script, stylesheet, font or media file; every page that loads it "
      "pays for it (a 900 KB bundle.js on the site template costs every visit).",
      fix="Split, minify and compress the resource; load it only on pages that need it.")
def heavy_resource(site: SiteView, t: Thresholds) -> Out:
    for r in sorted(site.resources, key=lambda r: -(r.size or 0)):
        if r.size is not None and r.size > t.heavy_resource_bytes:
            yield r.url, f"{r.size} bytes on {r.pages} page(s)"


@rule("resource-size-unknown", "assets", "notice", "Resource size unknown",
      explanation="The server sent no Content-Length, so the weight of this resource could not "
      "be judged without downloading it.",
      fix="Serve assets with Content-Length (or check them by hand).")
def resource_size_unknown(site: SiteView, t: Thresholds) -> Out:
    for r in [*site.resources, *site.images]:
        if r.size is None and r.status == 200:
            yield r.url, f"on {r.pages} page(s)"
