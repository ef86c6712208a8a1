//! See the suite's header in containment.rs.
