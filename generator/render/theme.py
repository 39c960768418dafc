"""A project's theme: the one way a team styles the tool's page, as declared properties validated
on input.

`templates/theme.yaml` (in the project's own templates folder; every key optional)::

    light:                     # the page's colours (a CSS colour each: #1f5fa8, navy, rgb(...))
      ink: "#1b1f24"           # text
      paper: "#ffffff"         # the page
      muted: "#57606a"         # quiet text: notes, captions, sources
      accent: "#1f5fa8"        # links, tabs, markers
      rule: "#d0d7de"          # dividers
      tint: "#f6f8fa"          # table headings, markers' ground
      mark: "#fff8c5"          # the post hoc mark's ground
      flag: "#b42318"          # untraceable and budget marks
      flag_background: "#fdecea"
      good: "#1a7f37"
      warn: "#9a4f00"
    dark: {...}                # the same keys for a dark screen; `dark: false`: the light colours always
    font: system               # one of FONTS
    font_size: 16              # px, the body text
    line_height: 1.55
    spacing: 1.0               # a factor on every margin and padding
    width: 58                  # the page's greatest width, rem
    logo: logo.png             # a PNG in the templates folder, shown beside the title at a fixed height

The page is drawn from these values alone: each colour is parsed (tinycss2) and written back as
`#rrggbb`, so nothing but a colour reaches the stylesheet; a font is a name from a fixed list of
generic stacks (a family of the team's own could be one whose glyphs are blank); every size lies
between a floor and a ceiling. Each scheme's colours are checked as the page pairs them: every
text colour against every ground it is drawn on at WCAG AA contrast (4.5:1), the dividers against
the page (1.25:1). A theme that fails is refused with its file, line and key. What the theme
cannot change: which blocks the page holds, their order, their type sizes relative to the body
(never below FLOOR_PX), font style and weight, and the author's-words marker.
"""

from __future__ import annotations

import base64
import struct
from dataclasses import field
from pathlib import Path
from typing import Any

from generator.core.dataclass import dataclass
from generator.storage.errors import InputError
from generator.storage.paths import display_path, reading
from generator.storage.safe_yaml import load_config_with_lines

THEME_NAME = "theme.yaml"
FLOOR_PX = 12.0             # no text of a tool block is drawn smaller (templates/readout.css)
AA = 4.5                    # WCAG AA contrast for text
RULE_CONTRAST = 1.25        # a divider against the page: seen, not read
LOGO_BYTES = 64 * 1024
LOGO_SIDE = 1024            # pixels, either side

COLOURS = ("ink", "paper", "muted", "accent", "rule", "tint", "mark", "flag", "flag_background", "good", "warn")
LIGHT = {"ink": "#1b1f24", "paper": "#ffffff", "muted": "#57606a", "accent": "#1f5fa8", "rule": "#d0d7de",
         "tint": "#f6f8fa", "mark": "#fff8c5", "flag": "#b42318", "flag_background": "#fdecea", "good": "#1a7f37",
         "warn": "#9a4f00"}
DARK = {"ink": "#e6edf3", "paper": "#0d1117", "muted": "#9da7b3", "accent": "#79b8ff", "rule": "#3d444d",
        "tint": "#161b22", "mark": "#3b2f00", "flag": "#ff9492", "flag_background": "#3c1618", "good": "#56d364",
        "warn": "#f0b849"}
# Every (text, ground) pair the page draws, as the stylesheet pairs them.
TEXT_ON = (("ink", "paper"), ("ink", "tint"), ("ink", "mark"), ("muted", "paper"), ("muted", "tint"),
           ("accent", "paper"), ("accent", "tint"), ("paper", "accent"), ("flag", "paper"),
           ("flag", "flag_background"), ("good", "paper"), ("warn", "paper"), ("ink", "flag_background"))
FONTS = {
    "system": 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif',
    "sans-serif": '"Helvetica Neue", Arial, "Liberation Sans", sans-serif',
    "serif": 'Georgia, "Times New Roman", "Liberation Serif", serif',
    "humanist": '"Gill Sans", "Trebuchet MS", Calibri, sans-serif',
    "monospace": 'ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace',
}
# (default, floor, ceiling) of each number.
NUMBERS = {"font_size": (16.0, 14.0, 24.0), "line_height": (1.55, 1.3, 2.0), "spacing": (1.0, 0.75, 1.75),
           "width": (58.0, 40.0, 80.0)}
KEYS = ("light", "dark", "font", "font_size", "line_height", "spacing", "width", "logo")


@dataclass(frozen=True)
class Theme:
    light: dict[str, str] = field(default_factory=lambda: dict(LIGHT))
    dark: dict[str, str] | None = field(default_factory=lambda: dict(DARK))
    font: str = "system"
    font_size: float = 16.0
    line_height: float = 1.55
    spacing: float = 1.0
    width: float = 58.0
    logo: str | None = None          # a data: URL of a PNG

    def css(self) -> str:
        """The page's custom properties: the only stylesheet text a project's choices reach."""
        def colours(values: dict[str, str]) -> str:
            return " ".join(f"--{name.replace('_background', '-bg')}: {value};" for name, value in values.items())

        sizes = (f"--font: {FONTS[self.font]}; --font-size: {self.font_size:g}px; "
                 f"--line-height: {self.line_height:g}; --space: {self.spacing:g}; --page-width: {self.width:g}rem;")
        scheme = "light dark" if self.dark is not None else "light"
        text = f":root {{ color-scheme: {scheme}; {colours(self.light)} {sizes} }}\n"
        if self.dark is not None:
            text += f"@media (prefers-color-scheme: dark) {{ :root {{ {colours(self.dark)} }} }}\n"
        return text


def luminance(hex_colour: str) -> float:
    def channel(value: int) -> float:
        share = value / 255
        return share / 12.92 if share <= 0.03928 else ((share + 0.055) / 1.055) ** 2.4

    red, green, blue = (int(hex_colour[index:index + 2], 16) for index in (1, 3, 5))
    return 0.2126 * channel(red) + 0.7152 * channel(green) + 0.0722 * channel(blue)


def contrast(first: str, second: str) -> float:
    """WCAG 2 contrast ratio of two #rrggbb colours."""
    light, dark = sorted((luminance(first), luminance(second)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def _colour(text: Any) -> str | None:
    """A CSS colour as #rrggbb, or None when it is not one, is not opaque or has no sRGB form."""
    import tinycss2.color4

    if not isinstance(text, str) or len(text) > 60:
        return None
    parsed = tinycss2.color4.parse_color(text.strip())
    if parsed is None or parsed == "currentcolor" or getattr(parsed, "alpha", 0) != 1:
        return None
    try:
        srgb = parsed.to("srgb")
    except NotImplementedError:
        return None
    return "#" + "".join(f"{round(max(0.0, min(1.0, value)) * 255):02x}" for value in srgb.coordinates)


def _png_logo(path: Path, shown: str) -> str:
    """A PNG as a data: URL, held to a size and a side (its header read, never decoded)."""
    if not path.is_file():
        raise InputError("missing: the logo theme.yaml names (a PNG beside theme.yaml)", path=shown)
    with reading(path):
        data = path.read_bytes()[:LOGO_BYTES + 1]
    if len(data) > LOGO_BYTES:
        raise InputError(f"a logo is at most {LOGO_BYTES // 1024} KB", path=shown)
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        raise InputError("a logo is a PNG file", path=shown)
    width, height = struct.unpack(">II", data[16:24])
    if not 0 < width <= LOGO_SIDE or not 0 < height <= LOGO_SIDE:
        raise InputError(f"a logo is at most {LOGO_SIDE} pixels a side (this one is {width} by {height})", path=shown)
    return "data:image/png;base64," + base64.b64encode(data).decode("ascii")


def load_theme(templates_dir: Path | None) -> Theme:
    """The project's theme.yaml, validated; the tool's own theme when there is none."""
    path = templates_dir / THEME_NAME if templates_dir is not None else None
    if path is None or not path.is_file():
        return Theme()
    shown = display_path(path)
    with reading(path):
        raw, lines = load_config_with_lines(path.read_text(encoding="utf-8"), shown)
    raw = raw or {}

    def error(key: str, message: str) -> InputError:
        return InputError(message, path=shown, line=lines.line(key), field=key)

    if not isinstance(raw, dict):
        raise InputError("expected a mapping of theme keys (light, dark, font, font_size, line_height, spacing, "
                         "width, logo)", path=shown, line=1)
    for key in raw:
        if key not in KEYS:
            raise error(str(key), f"unknown key; a theme declares {', '.join(KEYS)} (no stylesheet: the page is the "
                                  "tool's)")
    schemes: dict[str, dict[str, str] | None] = {}
    for scheme, defaults in (("light", LIGHT), ("dark", DARK)):
        given = raw.get(scheme, {})
        if scheme == "dark" and given is False:
            schemes[scheme] = None
            continue
        if given is None:
            given = {}
        if not isinstance(given, dict):
            raise error(scheme, f"expected a mapping of colour names ({', '.join(COLOURS)})"
                        + (" or false (the light colours on every screen)" if scheme == "dark" else ""))
        values = dict(defaults)
        for name, text in given.items():
            where = f"{scheme}.{name}"
            if name not in COLOURS:
                raise error(where, f"unknown colour; choose from {', '.join(COLOURS)}")
            colour = _colour(text)
            if colour is None:
                raise error(where, f"not an opaque CSS colour: {str(text)[:60]!r} (for example #1f5fa8 or navy)")
            values[str(name)] = colour
        for text, ground in TEXT_ON:
            ratio = contrast(values[text], values[ground])
            if ratio < AA:
                raise error(f"{scheme}.{text if text in given else ground}",
                            f"{text} {values[text]} on {ground} {values[ground]} has a contrast of {ratio:.2f}:1; "
                            f"text on the page needs at least {AA}:1 (WCAG AA)")
        if contrast(values["rule"], values["paper"]) < RULE_CONTRAST:
            raise error(f"{scheme}.rule", f"the dividers ({values['rule']}) cannot be told from the page "
                                          f"({values['paper']}): at least {RULE_CONTRAST}:1")
        schemes[scheme] = values
    font = raw.get("font", "system")
    if font not in FONTS:
        raise error("font", f"one of {', '.join(FONTS)} (a font family of the project's own could draw blank glyphs)")
    numbers = {}
    for key, (default, floor, ceiling) in NUMBERS.items():
        value = raw.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not floor <= value <= ceiling:
            raise error(key, f"a number from {floor:g} to {ceiling:g}, got {str(value)[:40]!r}")
        numbers[key] = float(value)
    logo = raw.get("logo")
    if logo is not None:
        if not isinstance(logo, str) or not logo.strip() or "/" in logo or "\\" in logo or logo.startswith("."):
            raise error("logo", "the name of a PNG file in the templates folder")
        logo = _png_logo(templates_dir / logo.strip(), display_path(templates_dir / logo.strip()))  # type: ignore[operator]
    return Theme(light=schemes["light"] or dict(LIGHT), dark=schemes["dark"], font=str(font), logo=logo, **numbers)
