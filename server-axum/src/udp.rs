//! The UDP socket HTTP/3 runs on: bound to the TCP listener's address, its receive and send buffers set to
//! `--udp-buffer` before quinn takes it.
//!
//! Why set them: a QUIC server reads every client's packets from this one socket, and at benchmark rates (many
//! connections, each sending a flight of full-size packets) the kernel's default of 208 KiB
//! (`net.core.rmem_default`) overflows between two reads, which drops packets that QUIC then has to detect as
//! lost and resend: latency spikes that are the server's, not the client's. A larger send buffer lets quinn's
//! batched (GSO) sends go out without waiting.
//!
//! An unprivileged process gets at most `net.core.rmem_max` / `wmem_max` (also 208 KiB by default); a process
//! with CAP_NET_ADMIN (root) asks with `SO_RCVBUFFORCE` / `SO_SNDBUFFORCE`, which the maximum does not cap.
//! What the kernel granted is read back and reported ([`Buffers`]); Linux reports twice the size asked for (it
//! counts its bookkeeping too).

use std::io;
use std::net::SocketAddr;

use socket2::{Domain, Protocol, Socket, Type};

/// The default `--udp-buffer`: 4 MiB each way.
pub const DEFAULT_BUFFER: usize = 4 * 1024 * 1024;

/// The socket buffer sizes the kernel granted, in bytes, as `SO_RCVBUF` / `SO_SNDBUF` read them back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Buffers {
    pub recv: u64,
    pub send: u64,
}

/// A non-blocking UDP socket bound to `addr` (never with SO_REUSEADDR: a port another socket holds is an
/// error, not shared), its buffers asked to be `size` bytes each; and the sizes granted.
pub fn bind(addr: SocketAddr, size: usize) -> io::Result<(std::net::UdpSocket, Buffers)> {
    let socket = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))?;
    set_buffer(&socket, Direction::Recv, size)?;
    set_buffer(&socket, Direction::Send, size)?;
    socket.bind(&addr.into())?;
    // tokio (inside quinn) needs it non-blocking
    socket.set_nonblocking(true)?;
    let granted = Buffers { recv: socket.recv_buffer_size()? as u64, send: socket.send_buffer_size()? as u64 };
    Ok((socket.into(), granted))
}

#[derive(Clone, Copy)]
enum Direction {
    Recv,
    Send,
}

/// Asks for `size` bytes, past `net.core.*mem_max` when privileged (see the module docs).
fn set_buffer(socket: &Socket, direction: Direction, size: usize) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let option = match direction {
            Direction::Recv => libc::SO_RCVBUFFORCE,
            Direction::Send => libc::SO_SNDBUFFORCE,
        };
        let value = libc::c_int::try_from(size).unwrap_or(libc::c_int::MAX);
        // SAFETY: setsockopt reads `value` (a c_int, its size given) and nothing else.
        let rc = unsafe {
            libc::setsockopt(
                socket.as_raw_fd(),
                libc::SOL_SOCKET,
                option,
                (&value as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        if rc == 0 {
            return Ok(());
        }
        let err = io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::EPERM) {
            return Err(err);
        }
        // without CAP_NET_ADMIN: the capped option below
    }
    match direction {
        Direction::Recv => socket.set_recv_buffer_size(size),
        Direction::Send => socket.set_send_buffer_size(size),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn a_port_in_use_is_an_error_and_buffers_are_reported() {
        let (first, granted) = bind("127.0.0.1:0".parse().unwrap(), 1 << 20).expect("bind");
        // Linux grants at least what the default maximum allows, and reports it doubled
        assert!(granted.recv >= 200_000 && granted.send >= 200_000, "{granted:?}");
        let taken = first.local_addr().unwrap();
        let err = bind(taken, 1 << 20).expect_err("the port is taken");
        assert_eq!(err.kind(), io::ErrorKind::AddrInUse, "{err}");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_small_request_is_honoured() {
        // well below any maximum: granted as asked (doubled by Linux), privileged or not
        let (_, granted) = bind("127.0.0.1:0".parse().unwrap(), 64 * 1024).expect("bind");
        assert_eq!(granted, Buffers { recv: 128 * 1024, send: 128 * 1024 });
    }
}
