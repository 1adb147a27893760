//! The minimizer (builder + predicate): issue 5.
