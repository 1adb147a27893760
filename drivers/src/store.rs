//! The findings store: issue 5.
