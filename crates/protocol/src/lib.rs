//! magnetar protocol
