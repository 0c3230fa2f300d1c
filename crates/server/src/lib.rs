//! The `magnetar` server: command line, non-real-time rendering, network
//! transport, audio drivers and the real-time server that ties them to the
//! engine. The binary (`main.rs`) only parses the command line and picks a
//! mode.

pub mod cli;
pub mod disk;
pub mod driver;
pub mod net;
pub mod nrt;
pub mod post;
pub mod printer;
pub mod realtime;
pub mod watchdog;
