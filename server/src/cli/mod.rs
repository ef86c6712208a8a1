//! cli (being written).
