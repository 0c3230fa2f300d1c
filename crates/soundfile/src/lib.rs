//! magnetar soundfile
