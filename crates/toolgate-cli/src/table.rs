//! Tables on a terminal: a header and rows, each column padded to its
//! widest cell (counted in characters), two spaces between columns.

use std::io::Write;

/// Writes `header` and `rows`, each line starting with `indent`.
pub fn write(
    out: &mut impl Write,
    indent: &str,
    header: &[&str],
    rows: &[Vec<String>],
) -> std::io::Result<()> {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let header: Vec<String> = header.iter().map(|h| (*h).to_owned()).collect();
    write_row(out, indent, &header, &widths)?;
    for row in rows {
        write_row(out, indent, row, &widths)?;
    }
    Ok(())
}

fn write_row(
    out: &mut impl Write,
    indent: &str,
    row: &[String],
    widths: &[usize],
) -> std::io::Result<()> {
    let mut line = String::from(indent);
    for (i, (cell, w)) in row.iter().zip(widths).enumerate() {
        line.push_str(cell);
        if i + 1 < row.len() {
            let pad = w.saturating_sub(cell.chars().count()) + 2;
            line.extend(std::iter::repeat_n(' ', pad));
        }
    }
    writeln!(out, "{}", line.trim_end())
}

#[cfg(test)]
mod tests {
    #[test]
    fn columns_are_padded_to_the_widest_cell() {
        let mut out = Vec::new();
        super::write(
            &mut out,
            "  ",
            &["id", "tool"],
            &[
                vec!["1".into(), "refund".into()],
                vec!["1000".into(), "é".into()],
            ],
        )
        .unwrap_or_default();
        assert_eq!(
            String::from_utf8(out).unwrap_or_default(),
            "  id    tool\n  1     refund\n  1000  é\n"
        );
    }
}
