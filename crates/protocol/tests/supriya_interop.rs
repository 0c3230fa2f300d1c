//! Cross-check against datagrams encoded by supriya (see
//! fixtures/supriya_osc.py): we decode them to the values supriya was given,
//! re-encode them byte for byte, and parse the commands.

use magnetar_protocol::{
    decode, parse_command, Address, Command, ControlSets, ControlValue, OscArg, OscMessage, OscPacket,
};

fn fixture(name: &str) -> Vec<u8> {
    let text = include_str!("fixtures/supriya_osc.txt");
    let hex = text
        .lines()
        .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(' ')))
        .unwrap_or_else(|| panic!("no fixture {name}"));
    (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect()
}

fn message(name: &str) -> OscMessage {
    let bytes = fixture(name);
    let packet = decode(&bytes).unwrap();
    assert_eq!(packet.encode(), bytes, "{name} re-encodes differently");
    match packet {
        OscPacket::Message(m) => m,
        OscPacket::Bundle(_) => panic!("{name} is a bundle"),
    }
}

#[test]
fn supriya_s_new_parses_with_named_controls() {
    let c = parse_command(&message("s_new")).unwrap();
    let Command::SNew { def_name, node, controls, .. } = c else { panic!() };
    assert_eq!((def_name.as_str(), node), ("sine", 1000));
    assert_eq!(
        controls,
        ControlSets::new().with("freq", [ControlValue::Value(440.0)]).with("amp", [ControlValue::Value(0.25)])
    );
}

#[test]
fn supriya_array_argument_sets_consecutive_controls() {
    let Command::SNew { controls, node, .. } = parse_command(&message("s_new_array")).unwrap() else { panic!() };
    assert_eq!(node, -1);
    assert_eq!(
        controls.to_vec()[0].1,
        vec![ControlValue::Value(1.0), ControlValue::Value(2.5), ControlValue::ControlBus(3)]
    );
}

#[test]
fn supriya_integer_address_dispatches_to_n_set() {
    let m = message("n_set_int_address");
    assert_eq!(m.address, Address::Number(15));
    let Command::NSet { node, controls } = parse_command(&m).unwrap() else { panic!() };
    assert_eq!(node, 1000.into());
    assert_eq!(controls.to_vec()[0].1, vec![ControlValue::Value(220.0)]);
}

#[test]
fn supriya_blob_completion_message_is_kept_raw() {
    let Command::DRecv { data, completion } = parse_command(&message("d_recv_blob")).unwrap() else { panic!() };
    assert_eq!(data, b"SCgf\x00\x00\x00\x02");
    let completion = completion.expect("completion message");
    let OscPacket::Message(sync) = decode(&completion).unwrap() else { panic!() };
    assert_eq!(parse_command(&sync).unwrap(), Command::Sync { id: 7 });
}

#[test]
fn supriya_atoms_decode() {
    let m = message("atoms");
    assert_eq!(
        m.args,
        vec![
            OscArg::Nil,
            OscArg::True,
            OscArg::False,
            OscArg::Str(String::new()),
            OscArg::Str("abcd".into()),
            OscArg::Blob(vec![])
        ]
    );
}

#[test]
fn supriya_nested_bundle_decodes() {
    let bytes = fixture("bundle");
    let OscPacket::Bundle(b) = decode(&bytes).unwrap() else { panic!() };
    assert_eq!(b.time, 1);
    assert_eq!(b.packets.len(), 2);
    assert_eq!(OscPacket::Bundle(b).encode(), bytes);
}
