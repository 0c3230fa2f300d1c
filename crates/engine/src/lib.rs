//! magnetar engine
