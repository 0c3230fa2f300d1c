//! magnetar synthdef
