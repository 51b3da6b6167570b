//! Memory's Markdown as HTML that is safe to show: every byte of it came from an agent or from
//! outside, so it is treated as hostile.
//!
//! Two layers, each enough alone for the cases it knows: pulldown-cmark's events are filtered
//! first (raw HTML becomes visible text, images become their alt text, `[[links]]` point at
//! the page's own file view), then ammonia cleans the HTML with an allowlist (no scripts, no
//! event handlers, no `style`, only `http`, `https` and `mailto` links, which open with
//! `rel="noopener noreferrer nofollow"`). The page's Content-Security-Policy is the third.

use pulldown_cmark::{CowStr, Event, LinkType, Options, Parser, Tag, TagEnd};
use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

/// Where `[[targets]]` lead: normalised target to the file it resolves to (absent: broken).
pub type Links = HashMap<String, String>;

static CLEANER: LazyLock<ammonia::Builder<'static>> = LazyLock::new(|| {
    let mut b = ammonia::Builder::default();
    b.rm_tags(["img"])
        .url_schemes(HashSet::from(["http", "https", "mailto"]))
        .link_rel(Some("noopener noreferrer nofollow"))
        .add_allowed_classes("a", ["broken"]);
    b
});

/// Renders Markdown `text` to clean HTML; `links` resolves `[[wiki links]]`.
pub fn render(text: &str, links: &Links) -> String {
    let opts = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_WIKILINKS;
    let mut image_depth = 0usize;
    let events = Parser::new_ext(text, opts).filter_map(|e| match e {
        // Raw HTML is shown as the text it is, never interpreted.
        Event::Html(h) | Event::InlineHtml(h) => Some(Event::Text(h)),
        // Images are never loaded (remote ones would leak that the page was read): their alt
        // text stays.
        Event::Start(Tag::Image { .. }) => {
            image_depth += 1;
            None
        }
        Event::End(TagEnd::Image) => {
            image_depth = image_depth.saturating_sub(1);
            None
        }
        Event::Start(Tag::Link {
            link_type: LinkType::WikiLink { .. },
            dest_url,
            title,
            id,
        }) => {
            let key = memdir_core::links::normalize(&dest_url);
            let (dest, class): (CowStr<'_>, _) = match links.get(&key) {
                Some(path) => (format!("/ui/files/{}", encode_path(path)).into(), ""),
                None => ("#".into(), "broken"),
            };
            let _ = (title, id);
            Some(Event::Start(Tag::Link {
                link_type: LinkType::Inline,
                dest_url: dest,
                title: class.into(),
                id: "".into(),
            }))
        }
        other => Some(other),
    });
    // A wiki link's title carried its class; turn it into one the cleaner keeps.
    let mut html = String::with_capacity(text.len() * 3 / 2);
    pulldown_cmark::html::push_html(&mut html, events);
    let html = html.replace(" title=\"broken\"", " class=\"broken\"");
    CLEANER.clean(&html).to_string()
}

/// `text` with its bidirectional controls (U+202A..U+202E, U+2066..U+2069) and zero-width
/// joiners shown as visible `<U+XXXX>` marks: a note cannot make `exe.png` out of `gnp.exe`, or
/// hide a word, on the page.
pub fn visible_controls(text: &str) -> std::borrow::Cow<'_, str> {
    let hidden = |c: char| matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200B}'..='\u{200F}' | '\u{061C}');
    if !text.chars().any(hidden) {
        return text.into();
    }
    text.chars()
        .map(|c| {
            if hidden(c) {
                format!("<U+{:04X}>", c as u32)
            } else {
                c.to_string()
            }
        })
        .collect::<String>()
        .into()
}

/// A memory path as a URL path: each segment percent-encoded, the slashes kept.
pub fn encode_path(path: &str) -> String {
    path.split('/')
        .map(|seg| {
            let mut out = String::with_capacity(seg.len());
            for b in seg.bytes() {
                if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                    out.push(b as char);
                } else {
                    out.push_str(&format!("%{b:02X}"));
                }
            }
            out
        })
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(md: &str, want: &str) {
        let mut links = Links::new();
        links.insert("priya".into(), "notes/people/priya.md".into());
        let got = render(md, &links);
        assert_eq!(got.trim(), want, "for {md:?}");
    }

    #[test]
    fn hostile_markdown_is_shown_not_run() {
        check(
            "<script>alert(1)</script>",
            "&lt;script&gt;alert(1)&lt;/script&gt;",
        );
        check(
            "a <img src=x onerror=alert(1)> b",
            "<p>a &lt;img src=x onerror=alert(1)&gt; b</p>",
        );
        check(
            "[click](javascript:alert(1))",
            "<p><a rel=\"noopener noreferrer nofollow\">click</a></p>",
        );
        check(
            "[x](data:text/html;base64,PHNjcmlwdD4=)",
            "<p><a rel=\"noopener noreferrer nofollow\">x</a></p>",
        );
        check("![tracker](https://evil.example/p.png)", "<p>tracker</p>");
        check(
            "<svg onload=alert(1)><style>*{}</style>",
            "<p>&lt;svg onload=alert(1)&gt;&lt;style&gt;*{}&lt;/style&gt;</p>",
        );
        check("&lt;b&gt; &amp;", "<p>&lt;b&gt; &amp;</p>");
    }

    #[test]
    fn wiki_links_lead_to_the_page_or_are_marked_broken() {
        check(
            "see [[Priya]] and [[nobody]]",
            "<p>see <a href=\"/ui/files/notes/people/priya.md\" rel=\"noopener noreferrer nofollow\">Priya</a> and <a href=\"#\" class=\"broken\" rel=\"noopener noreferrer nofollow\">nobody</a></p>",
        );
        check(
            "[[x\" onclick=\"alert(1)]]",
            "<p><a href=\"#\" class=\"broken\" rel=\"noopener noreferrer nofollow\">x\" onclick=\"alert(1)</a></p>",
        );
    }

    #[test]
    fn direction_tricks_are_shown() {
        assert_eq!(visible_controls("a\u{202e}gnp.exe"), "a<U+202E>gnp.exe");
        assert_eq!(visible_controls("plain"), "plain");
    }

    #[test]
    fn paths_are_encoded_per_segment() {
        assert_eq!(encode_path("notes/a b?.md"), "notes/a%20b%3F.md");
    }
}
