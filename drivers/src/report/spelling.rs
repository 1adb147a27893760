//! The spelling of enum tags in the JSON a user reads: kebab-case (`completes`,
//! `value-outside-allowed`, `per-word`), never a Rust variant name (`Completes`, `PerWord`);
//! rule ids keep the catalogue's spelling (`LD-ASYNC`, reference §6), which serde already
//! writes.
//!
//! The types themselves keep their serde spelling, because other formats share it (the
//! external simulator protocol's outcomes and cases, docs/external-protocol.md; the
//! regression corpus's expectations): [`user_json`] respells a value for a file a user
//! reads, and [`from_user_json`] reads such a file back into the type, accepting each enum
//! tag in either spelling (so files an earlier version wrote read back too).

use serde::de::DeserializeOwned;
use serde::de::{self, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, SeqAccess};
use serde::de::{EnumAccess, VariantAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

/// `value` serialized, its enum tags in kebab-case ([`kebab`]): every string value and
/// every key of a one-entry object (serde's external tag of a variant with data) that is a
/// Rust variant name ([`is_variant_name`]). Struct field names (snake_case), rule ids
/// (upper-case, hyphenated) and text (spaces, punctuation) are left as they are. A value
/// that would not read back equal ([`from_user_json`]; a text of one capitalized word would
/// be respelled as a tag) is written in its own serde spelling instead.
pub fn user_json<T>(value: &T) -> serde_json::Result<Value>
where
    T: Serialize + DeserializeOwned + PartialEq,
{
    let own = serde_json::to_value(value)?;
    let user = user_spelling(own.clone());
    Ok(match from_user_json::<T>(user.clone()) {
        Ok(back) if back == *value => user,
        _ => own,
    })
}

/// `v` with its enum tags in kebab-case, as [`user_json`] respells them, without the check
/// that it reads back: for output nothing reads back (a listing printed as JSON).
pub fn user_spelling(v: Value) -> Value {
    match v {
        Value::String(s) if is_variant_name(&s) => Value::String(kebab(&s)),
        Value::Array(a) => Value::Array(a.into_iter().map(user_spelling).collect()),
        Value::Object(m) => {
            let one = m.len() == 1;
            let m: Map<String, Value> = m
                .into_iter()
                .map(|(k, v)| {
                    let k = if one && is_variant_name(&k) {
                        kebab(&k)
                    } else {
                        k
                    };
                    (k, user_spelling(v))
                })
                .collect();
            Value::Object(m)
        }
        v => v,
    }
}

/// Serializes a field in user spelling ([`user_json`]): `#[serde(with = "...spelling")]`.
pub fn serialize<T, S>(value: &T, s: S) -> Result<S::Ok, S::Error>
where
    T: Serialize + DeserializeOwned + PartialEq,
    S: Serializer,
{
    user_json(value)
        .map_err(serde::ser::Error::custom)?
        .serialize(s)
}

/// Deserializes a field written by [`serialize`], or in the type's own spelling
/// ([`from_user_json`]).
pub fn deserialize<'de, T, D>(d: D) -> Result<T, D::Error>
where
    T: DeserializeOwned,
    D: Deserializer<'de>,
{
    from_user_json(Value::deserialize(d)?).map_err(de::Error::custom)
}

/// Whether `s` looks like a Rust variant name: an upper-case ASCII letter, then letters and
/// digits, with a lower-case letter or digit among them (`Completes`, `PerWord`, `X1`, not
/// `LD-ASYNC` or `OK`).
pub fn is_variant_name(s: &str) -> bool {
    let mut c = s.chars();
    c.next().is_some_and(|f| f.is_ascii_uppercase())
        && s.chars().all(|c| c.is_ascii_alphanumeric())
        && s.chars()
            .any(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
}

/// A variant name in kebab-case: `MayBlock` → `may-block`, `S16x128b` → `s16x128b`.
pub fn kebab(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 4);
    for (i, c) in s.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('-');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Reads a `T` from JSON whose enum tags may be in kebab-case ([`user_json`]) or in the
/// type's own serde spelling: each tag is matched against the variant names the type
/// declares, so the reading is exact (no guess about which strings are tags).
pub fn from_user_json<T: DeserializeOwned>(v: Value) -> serde_json::Result<T> {
    T::deserialize(Tags(v))
}

/// A JSON value read as a type whose enum tags may be kebab-case (see [`from_user_json`]).
struct Tags(Value);

type Error = serde_json::Error;

impl<'de> Deserializer<'de> for Tags {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Array(a) => visitor.visit_seq(Seq(a.into_iter())),
            Value::Object(m) => visitor.visit_map(Entries {
                it: m.into_iter(),
                value: None,
            }),
            v => v.deserialize_any(visitor),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            v => visitor.visit_some(Tags(v)),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        let (tag, content) = match self.0 {
            Value::String(s) => (s, None),
            Value::Object(m) if m.len() == 1 => {
                let (k, v) = m.into_iter().next().expect("one entry");
                (k, Some(v))
            }
            other => {
                return Err(de::Error::invalid_type(
                    unexpected(&other),
                    &"an enum tag or a one-entry object",
                ));
            }
        };
        let tag = if variants.contains(&tag.as_str()) {
            tag
        } else {
            variants
                .iter()
                .find(|v| kebab(v) == tag)
                .map_or(tag, |v| v.to_string())
        };
        visitor.visit_enum(Variant { tag, content })
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map struct identifier
        ignored_any
    }
}

fn unexpected(v: &Value) -> de::Unexpected<'_> {
    match v {
        Value::Null => de::Unexpected::Unit,
        Value::Bool(b) => de::Unexpected::Bool(*b),
        Value::Number(_) => de::Unexpected::Other("a number"),
        Value::String(s) => de::Unexpected::Str(s),
        Value::Array(_) => de::Unexpected::Seq,
        Value::Object(_) => de::Unexpected::Map,
    }
}

struct Seq(std::vec::IntoIter<Value>);

impl<'de> SeqAccess<'de> for Seq {
    type Error = Error;

    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, Error> {
        self.0.next().map(|v| seed.deserialize(Tags(v))).transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

struct Entries {
    it: serde_json::map::IntoIter,
    value: Option<Value>,
}

impl<'de> MapAccess<'de> for Entries {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let Some((k, v)) = self.it.next() else {
            return Ok(None);
        };
        self.value = Some(v);
        seed.deserialize(k.into_deserializer()).map(Some)
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, Error> {
        let v = self
            .value
            .take()
            .ok_or_else(|| de::Error::custom("a map value before its key"))?;
        seed.deserialize(Tags(v))
    }
}

struct Variant {
    tag: String,
    content: Option<Value>,
}

impl<'de> EnumAccess<'de> for Variant {
    type Error = Error;
    type Variant = Content;

    fn variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<(S::Value, Content), Error> {
        let tag = seed.deserialize(self.tag.into_deserializer())?;
        Ok((tag, Content(self.content)))
    }
}

struct Content(Option<Value>);

impl Content {
    fn value(self) -> Result<Value, Error> {
        self.0
            .ok_or_else(|| de::Error::invalid_type(de::Unexpected::UnitVariant, &"variant data"))
    }
}

impl<'de> VariantAccess<'de> for Content {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        match self.0 {
            None | Some(Value::Null) => Ok(()),
            Some(v) => Err(de::Error::invalid_type(unexpected(&v), &"a unit variant")),
        }
    }

    fn newtype_variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<S::Value, Error> {
        seed.deserialize(Tags(self.value()?))
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, Error> {
        Tags(self.value()?).deserialize_any(visitor)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        Tags(self.value()?).deserialize_any(visitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::{Outcome, TrapKind};
    use tcgen05_oracle::Expected;

    #[test]
    fn variant_names_become_kebab_case_and_nothing_else_changes() {
        assert_eq!(kebab("MayBlock"), "may-block");
        assert_eq!(kebab("S16x128b"), "s16x128b");
        assert!(is_variant_name("Completes") && is_variant_name("X1"));
        for s in [
            "LD-ASYNC",
            "OK",
            "may leak",
            "words",
            "limit_ms",
            "Other text",
            "",
        ] {
            assert!(!is_variant_name(s), "{s}");
        }
    }

    /// Real expectations and outcomes of generated programs written in user spelling read
    /// back equal, and so does their own serde spelling; no variant name is left.
    #[test]
    fn expectations_and_outcomes_round_trip_in_either_spelling() {
        let cfg = tcgen05_generators::Config::default();
        let Some(Ok(sim)) = crate::sim::SimConfig::parse("sim:adversarial+wait-st-early") else {
            panic!("a simulator name")
        };
        let mut outcomes = vec![
            Outcome::Trapped {
                kind: TrapKind::Other("illegal TMEM access".into()),
                words: vec![1],
            },
            Outcome::TimedOut { limit_ms: 5 },
        ];
        for seed in 0..40 {
            let p = tcgen05_generators::valid_program(&cfg, seed);
            let e: Expected = tcgen05_oracle::expect(&p);
            let user = user_json(&e).expect("serializable");
            assert_no_variant_names(&user, &format!("seed {seed}"));
            assert_eq!(from_user_json::<Expected>(user).ok().as_ref(), Some(&e));
            let own = serde_json::to_value(&e).expect("serializable");
            assert_eq!(from_user_json::<Expected>(own).ok().as_ref(), Some(&e));
            outcomes.push(crate::sim::simulate(&p, sim, seed));
        }
        for o in outcomes {
            let user = user_json(&o).expect("serializable");
            assert_no_variant_names(&user, &format!("{o:?}"));
            assert_eq!(from_user_json::<Outcome>(user).ok().as_ref(), Some(&o));
        }
    }

    /// A text of one capitalized word (which respelling would take for a tag) keeps its own
    /// spelling, and reads back equal.
    #[test]
    fn a_value_that_would_not_read_back_keeps_its_own_spelling() {
        let o = Outcome::NotRun("Unsupported".into());
        let v = user_json(&o).expect("serializable");
        assert_eq!(v, serde_json::to_value(&o).expect("serializable"));
        assert_eq!(from_user_json::<Outcome>(v).ok(), Some(o));
    }

    /// Fails on a Rust variant name anywhere in `v` as a tag (text with spaces is text).
    fn assert_no_variant_names(v: &Value, what: &str) {
        match v {
            Value::String(s) => assert!(!is_variant_name(s), "{what}: {s}"),
            Value::Array(a) => a.iter().for_each(|x| assert_no_variant_names(x, what)),
            Value::Object(m) => {
                for (k, x) in m {
                    assert!(m.len() != 1 || !is_variant_name(k), "{what}: {k}");
                    assert_no_variant_names(x, what);
                }
            }
            _ => {}
        }
    }
}
