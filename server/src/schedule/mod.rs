//! The pure scheduling core of SPEC section 3: cron expressions, daily windows, and the
//! due/next-due arithmetic over an injected clock and time zone. No I/O, no async runtime.

pub mod clock;
pub mod cron;
pub mod due;
pub mod host;
pub mod trigger;
pub mod until;
pub mod window;
pub mod zone;

pub use clock::{Clock, ManualClock, SystemClock};
pub use cron::{CronField, CronParseError, CronSchedule, presets};
pub use due::{
    CronSkip, Decision, DueTrigger, Missed, ScheduleInput, SkipReason, WindowSkip, due, due_asked, missed,
    next_due,
};
pub use trigger::TriggerKind;
pub use until::Until;
pub use window::{Band, TimeOfDay, TimeOfDayError, Window};
pub use zone::Zone;
