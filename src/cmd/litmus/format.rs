//! The litmus file format (docs/litmus.md): an ordinary PTX module whose `//@` comment lines
//! (ignored by ptxas) give the launch, the observed locations and herd-style conditions.
//!
//! ```text
//! //@ litmus NAME
//! //@ launch warps=N [cluster=C] [clusters=K]
//! //@ edition seeds|ptx93
//! //@ option co-residency=per-cta|shared-sm | multi-warp-alloc=true|false
//! //@ observe NAME = %REG [cta=N] [warp=N] [lane=N]
//! //@ exists ATOM /\ ATOM \/ ATOM ...      (ATOM: NAME == INT or NAME != INT)
//! //@ forall ...
//! //@ expect verdict=completes|may-block|must-deadlock|undefined|ill-formed [rules=R1,R2] [unspecified=NAME,...]
//! //@ source TEXT   /   //@ note TEXT
//! ```

use tcgen05_ir::ptx::model::Shape;
use tcgen05_oracle::{CoResidency, Edition};

/// A header error: where and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatError {
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub col: u32,
    /// What is wrong.
    pub msg: String,
}

/// An observed location: a register that a `tcgen05.ld` writes, in one lane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observe {
    /// The name conditions use.
    pub name: String,
    /// The PTX register.
    pub reg: String,
    /// Global CTA index.
    pub cta: u32,
    /// Warp rank.
    pub warp: u8,
    /// Lane.
    pub lane: u8,
    /// Header line.
    pub line: u32,
}

/// `NAME == v` or `NAME != v`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Atom {
    /// Index into [`Litmus::observe`].
    pub loc: usize,
    /// `==` (else `!=`).
    pub eq: bool,
    /// The value.
    pub value: u64,
}

/// `exists` or `forall` over a disjunction of conjunctions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Condition {
    /// `forall` (else `exists`).
    pub forall: bool,
    /// The text as written.
    pub text: String,
    /// Disjunction of conjunctions.
    pub dnf: Vec<Vec<Atom>>,
}

/// An expected verdict, for corpus files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expect {
    /// The verdict word.
    pub verdict: String,
    /// Rules that must be among the reported ones.
    pub rules: Vec<String>,
    /// Locations whose value must be unspecified (a race on the read).
    pub unspecified: Vec<String>,
}

/// A parsed header.
#[derive(Debug, Clone, Default)]
pub struct Litmus {
    /// `litmus NAME`.
    pub name: Option<String>,
    /// `launch ...`.
    pub shape: Option<Shape>,
    /// `edition ...`.
    pub edition: Option<Edition>,
    /// `option co-residency=...`.
    pub co_residency: Option<CoResidency>,
    /// `option multi-warp-alloc=...`.
    pub multi_warp_alloc: Option<bool>,
    /// `observe ...`.
    pub observe: Vec<Observe>,
    /// `exists` / `forall`.
    pub conds: Vec<Condition>,
    /// `expect ...`.
    pub expect: Option<Expect>,
}

fn err(line: u32, col: usize, msg: impl Into<String>) -> FormatError {
    FormatError {
        line,
        col: col as u32 + 1,
        msg: msg.into(),
    }
}

fn num(s: &str) -> Option<u64> {
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// `key=value` words.
fn kv(rest: &str, line: u32, at: usize) -> Result<Vec<(&str, &str, usize)>, FormatError> {
    let mut out = Vec::new();
    let mut col = at;
    for w in rest.split(' ') {
        if !w.is_empty() {
            let (k, v) = w
                .split_once('=')
                .ok_or_else(|| err(line, col, format!("expected key=value, found `{w}`")))?;
            out.push((k, v, col));
        }
        col += w.len() + 1;
    }
    Ok(out)
}

/// Parses the `//@` header of `src`.
pub fn parse(src: &str) -> Result<Litmus, FormatError> {
    let mut l = Litmus::default();
    let mut pending: Vec<(bool, String, u32, usize)> = Vec::new();
    for (i, text) in src.lines().enumerate() {
        let line = i as u32 + 1;
        let Some(at) = text.find("//@") else { continue };
        if !text[..at].trim().is_empty() {
            continue;
        }
        let body = &text[at + 3..];
        let lead = body.len() - body.trim_start().len();
        let body = body.trim_start();
        let base = at + 3 + lead;
        let (word, rest) = body.split_once(' ').unwrap_or((body, ""));
        let rest_at = base + word.len() + 1;
        let rest = rest.trim_end();
        match word {
            "litmus" => l.name = Some(rest.trim().to_string()),
            "source" | "note" => {}
            "launch" => {
                let mut s = Shape {
                    warps_per_cta: 1,
                    cluster_size: 1,
                    clusters: 1,
                };
                for (k, v, c) in kv(rest, line, rest_at)? {
                    let n = num(v).ok_or_else(|| err(line, c, format!("`{v}` is not a number")))?;
                    match k {
                        "warps" if (1..=16).contains(&n) => s.warps_per_cta = n as u8,
                        "cluster" if [1, 2, 4].contains(&n) => s.cluster_size = n as u8,
                        "clusters" if (1..=64).contains(&n) => s.clusters = n as u16,
                        "warps" | "cluster" | "clusters" => {
                            return Err(err(
                                line,
                                c,
                                format!(
                                    "{k}={n} is outside the model (warps 1-16, cluster 1, 2 or 4, clusters 1-64)"
                                ),
                            ));
                        }
                        _ => {
                            return Err(err(
                                line,
                                c,
                                format!("unknown launch key `{k}` (warps, cluster, clusters)"),
                            ));
                        }
                    }
                }
                l.shape = Some(s);
            }
            "edition" => {
                l.edition = Some(
                    rest.trim()
                        .parse()
                        .map_err(|e| err(line, rest_at, format!("{e}")))?,
                );
            }
            "option" => {
                for (k, v, c) in kv(rest, line, rest_at)? {
                    match (k, v) {
                        ("co-residency", "per-cta") => l.co_residency = Some(CoResidency::PerCta),
                        ("co-residency", "shared-sm") => {
                            l.co_residency = Some(CoResidency::SharedSm)
                        }
                        ("multi-warp-alloc", "true") => l.multi_warp_alloc = Some(true),
                        ("multi-warp-alloc", "false") => l.multi_warp_alloc = Some(false),
                        _ => {
                            return Err(err(
                                line,
                                c,
                                format!(
                                    "unknown option `{k}={v}` (co-residency=per-cta|shared-sm, multi-warp-alloc=true|false)"
                                ),
                            ));
                        }
                    }
                }
            }
            "observe" => {
                let (name, rhs) = rest.split_once('=').ok_or_else(|| {
                    err(
                        line,
                        rest_at,
                        "expected `observe NAME = %REG [cta=N] [warp=N] [lane=N]`",
                    )
                })?;
                let name = name.trim();
                if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    return Err(err(
                        line,
                        rest_at,
                        format!("`{name}` is not a location name (letters, digits, _)"),
                    ));
                }
                if l.observe.iter().any(|o| o.name == name) {
                    return Err(err(
                        line,
                        rest_at,
                        format!("location `{name}` observed twice"),
                    ));
                }
                let rhs_at = rest_at + rest.find('=').unwrap_or(0) + 1;
                let rhs = rhs.trim_start();
                let (reg, more) = rhs.split_once(' ').unwrap_or((rhs, ""));
                if !reg.starts_with('%') {
                    return Err(err(
                        line,
                        rhs_at,
                        format!("expected a register, found `{reg}`"),
                    ));
                }
                let mut o = Observe {
                    name: name.to_string(),
                    reg: reg.to_string(),
                    cta: 0,
                    warp: 0,
                    lane: 0,
                    line,
                };
                for (k, v, c) in kv(more, line, rhs_at + reg.len() + 1)? {
                    let n = num(v).ok_or_else(|| err(line, c, format!("`{v}` is not a number")))?;
                    match k {
                        "cta" => o.cta = n as u32,
                        "warp" if n < 16 => o.warp = n as u8,
                        "lane" if n < 32 => o.lane = n as u8,
                        _ => {
                            return Err(err(
                                line,
                                c,
                                format!(
                                    "unknown or out-of-range key `{k}={v}` (cta, warp < 16, lane < 32)"
                                ),
                            ));
                        }
                    }
                }
                l.observe.push(o);
            }
            "exists" | "forall" => {
                pending.push((word == "forall", rest.trim().to_string(), line, rest_at))
            }
            "expect" => {
                let mut e = Expect {
                    verdict: String::new(),
                    rules: vec![],
                    unspecified: vec![],
                };
                for (k, v, c) in kv(rest, line, rest_at)? {
                    match k {
                        "verdict"
                            if [
                                "completes",
                                "may-block",
                                "must-deadlock",
                                "undefined",
                                "ill-formed",
                            ]
                            .contains(&v) =>
                        {
                            e.verdict = v.to_string();
                        }
                        "rules" => e.rules = v.split(',').map(str::to_string).collect(),
                        "unspecified" => {
                            for n in v.split(',') {
                                if !l.observe.iter().any(|o| o.name == n) {
                                    return Err(err(
                                        line,
                                        c,
                                        format!("`{n}` is not an observed location"),
                                    ));
                                }
                                e.unspecified.push(n.to_string());
                            }
                        }
                        _ => return Err(err(line, c, format!("unknown expectation `{k}={v}`"))),
                    }
                }
                if e.verdict.is_empty() {
                    return Err(err(line, rest_at, "expect needs verdict=..."));
                }
                l.expect = Some(e);
            }
            other => {
                return Err(err(
                    line,
                    base,
                    format!(
                        "unknown directive `{other}` (litmus, launch, edition, option, observe, exists, forall, expect, source, note)"
                    ),
                ));
            }
        }
    }
    for (forall, text, line, at) in pending {
        let dnf = parse_cond(&text, &l.observe, line, at)?;
        l.conds.push(Condition { forall, text, dnf });
    }
    Ok(l)
}

fn parse_cond(
    text: &str,
    obs: &[Observe],
    line: u32,
    at: usize,
) -> Result<Vec<Vec<Atom>>, FormatError> {
    let mut dnf = Vec::new();
    let mut col = at;
    for clause in text.split("\\/") {
        let mut conj = Vec::new();
        let mut c2 = col;
        for atom in clause.split("/\\") {
            let a = atom.trim();
            let a_col = c2 + (atom.len() - atom.trim_start().len());
            let (lhs, eq, rhs) = if let Some((x, y)) = a.split_once("==") {
                (x, true, y)
            } else if let Some((x, y)) = a.split_once("!=") {
                (x, false, y)
            } else {
                return Err(err(
                    line,
                    a_col,
                    format!("expected `NAME == INT` or `NAME != INT`, found `{a}`"),
                ));
            };
            let name = lhs.trim();
            let loc = obs.iter().position(|o| o.name == name).ok_or_else(|| {
                err(
                    line,
                    a_col,
                    format!(
                        "`{name}` is not an observed location (add `//@ observe {name} = %reg ...`)"
                    ),
                )
            })?;
            let value = num(rhs.trim())
                .ok_or_else(|| err(line, a_col, format!("`{}` is not a number", rhs.trim())))?;
            conj.push(Atom { loc, eq, value });
            c2 += atom.len() + 2;
        }
        dnf.push(conj);
        col += clause.len() + 2;
    }
    Ok(dnf)
}

/// Whether a condition can hold (`exists`) or always holds (`forall`), given each location's
/// allowed values (`None`: unspecified, any value). Locations are independent: the oracle gives
/// each its own set, so the product of the sets is the set of outcomes considered.
pub fn eval(c: &Condition, sets: &[Option<Vec<u64>>]) -> Option<bool> {
    let clause_can = |conj: &[Atom]| -> Option<bool> {
        let mut unknown = false;
        for (loc, set) in sets.iter().enumerate() {
            let atoms: Vec<&Atom> = conj.iter().filter(|a| a.loc == loc).collect();
            if atoms.is_empty() {
                continue;
            }
            let ok = |v: u64| atoms.iter().all(|a| (v == a.value) == a.eq);
            match set {
                Some(vals) => {
                    if !vals.iter().any(|&v| ok(v)) {
                        return Some(false);
                    }
                }
                None => {
                    // Some value satisfies the atoms unless two `==` disagree or one `==` is
                    // also excluded.
                    let eqs: Vec<u64> = atoms.iter().filter(|a| a.eq).map(|a| a.value).collect();
                    if eqs.first().is_some_and(|&v| !ok(v)) {
                        return Some(false);
                    }
                    unknown = true;
                }
            }
        }
        if unknown { None } else { Some(true) }
    };
    if !c.forall {
        let mut any_unknown = false;
        for conj in &c.dnf {
            match clause_can(conj) {
                Some(true) => return Some(true),
                None => any_unknown = true,
                Some(false) => {}
            }
        }
        return if any_unknown { None } else { Some(false) };
    }
    // forall: every outcome of the product satisfies some clause.
    let locs: Vec<usize> = (0..sets.len())
        .filter(|l| c.dnf.iter().flatten().any(|a| a.loc == *l))
        .collect();
    let mut vals = Vec::new();
    for &l in &locs {
        vals.push(sets[l].clone()?);
    }
    let total: usize = vals.iter().map(Vec::len).product();
    if total > 1 << 16 {
        return None;
    }
    let mut pick = vec![0usize; locs.len()];
    for _ in 0..total {
        let value = |loc: usize| {
            vals[locs.iter().position(|&x| x == loc).expect("listed")]
                [pick[locs.iter().position(|&x| x == loc).expect("listed")]]
        };
        let holds = c
            .dnf
            .iter()
            .any(|conj| conj.iter().all(|a| (value(a.loc) == a.value) == a.eq));
        if !holds {
            return Some(false);
        }
        for k in 0..pick.len() {
            pick[k] += 1;
            if pick[k] < vals[k].len() {
                break;
            }
            pick[k] = 0;
        }
    }
    Some(true)
}

/// The `//@` header that makes the printed PTX of `program` a litmus file: its launch and,
/// when the general lifter reads the PTX back, the first register of the first `tcgen05.ld` of
/// warp 0 in lanes 0 and 31 as observed locations.
pub fn header_for(name: &str, program: &tcgen05_ir::Program, ptx: &str) -> String {
    let l = &program.launch;
    let mut h = format!(
        "//@ litmus {name}\n//@ launch warps={} cluster={} clusters={}\n",
        l.warps_per_cta, l.cluster_size, l.clusters
    );
    let shape = Shape {
        warps_per_cta: l.warps_per_cta,
        cluster_size: l.cluster_size,
        clusters: l.clusters,
    };
    if let Ok(lifted) = tcgen05_ir::ptx::model::lift_source(ptx, name, None, Some(shape))
        && let Some(reg) = lifted
            .lds
            .iter()
            .find(|s| s.cta == 0 && s.warp == 0)
            .and_then(|s| s.info.regs.first())
            .filter(|r| !r.is_empty())
    {
        h += &format!(
            "//@ observe v0 = {reg} warp=0 lane=0\n//@ observe v31 = {reg} warp=0 lane=31\n"
        );
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "//@ litmus t\n//@ launch warps=2 cluster=2\n//@ observe a = %r1 warp=1 lane=3\n//@ observe b = %r2\n//@ exists a == 1 /\\ b == 2 \\/ a == 0x10\n//@ forall a != 7\n.version 8.6\n";

    #[test]
    fn a_header_parses() {
        let l = parse(SRC).unwrap();
        assert_eq!(l.shape.unwrap().warps_per_cta, 2);
        assert_eq!(l.shape.unwrap().cluster_size, 2);
        assert_eq!(l.observe[0].warp, 1);
        assert_eq!(l.observe[0].lane, 3);
        assert_eq!(l.conds[0].dnf.len(), 2);
        assert_eq!(l.conds[0].dnf[1][0].value, 16);
    }

    #[test]
    fn conditions_over_sets() {
        let l = parse(SRC).unwrap();
        // a in {1, 5}, b unspecified: the first clause may hold, unknown; a == 16 cannot.
        assert_eq!(eval(&l.conds[0], &[Some(vec![1, 5]), None]), None);
        assert_eq!(eval(&l.conds[0], &[Some(vec![16]), None]), Some(true));
        assert_eq!(
            eval(&l.conds[0], &[Some(vec![5]), Some(vec![2])]),
            Some(false)
        );
        assert_eq!(eval(&l.conds[1], &[Some(vec![1, 5]), None]), Some(true));
        assert_eq!(eval(&l.conds[1], &[Some(vec![1, 7]), None]), Some(false));
    }

    #[test]
    fn an_unobserved_location_is_an_error_with_its_column() {
        let e = parse("//@ observe a = %r1\n//@ exists a == 1 /\\ zz == 2\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(
            e.msg.contains("`zz` is not an observed location"),
            "{}",
            e.msg
        );
        assert_eq!(e.col, 22, "{e:?}"); // 1-based: the `z` of `zz`
    }

    #[test]
    fn unknown_directives_and_keys_are_errors() {
        assert!(
            parse("//@ lauch warps=1\n")
                .unwrap_err()
                .msg
                .contains("unknown directive")
        );
        let e = parse("//@ launch warps=1 ctas=2\n").unwrap_err();
        assert_eq!((e.line, e.col), (1, 20), "{e:?}");
    }
}
