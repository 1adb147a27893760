//! `Outcome`: what a target reports: issue 5.
