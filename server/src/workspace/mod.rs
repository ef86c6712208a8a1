//! workspace (being written).
