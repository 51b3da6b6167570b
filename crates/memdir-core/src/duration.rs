//! Time-to-live strings: `90` (minutes), `30m`, `2h`, `1d`, `1w`.

/// Parses a TTL into milliseconds. A bare number is minutes.
pub fn parse_ttl(input: &str) -> Result<i64, String> {
    let s = input.trim();
    let (digits, unit_ms) = match s.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        None => (s, 60_000),
        Some((i, _)) => {
            let unit = match &s[i..] {
                "s" => 1_000,
                "m" => 60_000,
                "h" => 3_600_000,
                "d" => 86_400_000,
                "w" => 7 * 86_400_000,
                _ => return Err(bad(input)),
            };
            (&s[..i], unit)
        }
    };
    let n: i64 = digits.parse().map_err(|_| bad(input))?;
    if n == 0 {
        return Err(format!(
            "duration {input:?} is zero: give a positive time to live"
        ));
    }
    n.checked_mul(unit_ms)
        .filter(|ms| *ms <= 3_650 * 86_400_000)
        .ok_or_else(|| format!("duration {input:?} is too long: at most 3650d"))
}

fn bad(input: &str) -> String {
    format!(
        "bad duration {input:?}: use minutes (90) or a number with s, m, h, d or w (30m, 2h, 1d, 1w)"
    )
}

#[cfg(test)]
mod tests {
    use super::parse_ttl;

    #[test]
    fn forms() {
        assert_eq!(parse_ttl("90"), Ok(90 * 60_000));
        assert_eq!(parse_ttl("30m"), Ok(30 * 60_000));
        assert_eq!(parse_ttl("2h"), Ok(2 * 3_600_000));
        assert_eq!(parse_ttl("1d"), Ok(86_400_000));
        assert_eq!(parse_ttl("45s"), Ok(45_000));
        assert_eq!(parse_ttl("2w"), Ok(14 * 86_400_000));
        for bad in ["", "m", "1y", "-5", "1.5h", "0", "99999999999d", "2 h"] {
            assert!(parse_ttl(bad).is_err(), "{bad}");
        }
    }
}
