//! The one exchange of a superstep: a timely input of packets routed to their destination
//! worker, a sink that files them, and a probe that says when a round has been delivered.

use std::cell::RefCell;
use std::rc::Rc;

use serde::Serialize;
use serde::de::DeserializeOwned;
use std::collections::VecDeque;

use timely::container::{
    CapacityContainerBuilder, ContainerBuilder, LengthPreservingContainerBuilder, PushInto,
};
use timely::dataflow::channels::pact::ExchangeCore;
use timely::dataflow::operators::generic::Operator;
use timely::dataflow::operators::{Input, Probe};
use timely::dataflow::{InputHandle, ProbeHandle};
use timely::worker::Worker;

/// A packet with a destination worker and a round (superstep) number.
pub(crate) trait Routed: Clone + Send + Serialize + DeserializeOwned + 'static {
    /// Destination worker.
    fn to(&self) -> u32;
    /// Round the packet belongs to.
    fn round(&self) -> u64;
}

/// A container builder that ships every packet as its own timely message. timely's
/// default batches up to 8 KiB of packet *structs* per message, i.e. a whole round's
/// packets to one peer, and its network receive buffer (1 MiB) doubles to fit the largest
/// message and keeps the larger size: one packet per message, with packets of bounded
/// size, keeps that buffer at 1 MiB.
pub(crate) struct OnePacket<P> {
    empty: Option<Vec<P>>,
    pending: VecDeque<Vec<P>>,
}

impl<P> Default for OnePacket<P> {
    fn default() -> Self {
        Self {
            empty: None,
            pending: VecDeque::new(),
        }
    }
}

impl<P> PushInto<P> for OnePacket<P> {
    fn push_into(&mut self, item: P) {
        let mut v = self.empty.take().unwrap_or_default();
        v.clear();
        v.push(item);
        self.pending.push_back(v);
    }
}

impl<P: 'static> ContainerBuilder for OnePacket<P> {
    type Container = Vec<P>;

    fn extract(&mut self) -> Option<&mut Vec<P>> {
        self.empty = self.pending.pop_front();
        self.empty.as_mut()
    }

    fn finish(&mut self) -> Option<&mut Vec<P>> {
        self.extract()
    }
}

impl<P: 'static> LengthPreservingContainerBuilder for OnePacket<P> {}

/// One worker's end of the exchange.
pub(crate) struct Halo<P: Routed> {
    input: InputHandle<u64, CapacityContainerBuilder<Vec<P>>>,
    probe: ProbeHandle<u64>,
    inbox: Rc<RefCell<Vec<P>>>,
}

impl<P: Routed> Halo<P> {
    /// Builds the dataflow in `worker` (every worker must build it, in the same order as
    /// its other dataflows).
    pub(crate) fn new(worker: &mut Worker) -> Self {
        let inbox: Rc<RefCell<Vec<P>>> = Rc::new(RefCell::new(Vec::new()));
        let mut input = InputHandle::new();
        let probe = ProbeHandle::new();
        let sink = Rc::clone(&inbox);
        worker.dataflow::<u64, _, _>(|scope| {
            scope
                .input_from(&mut input)
                .unary::<CapacityContainerBuilder<Vec<()>>, _, _, _>(
                    ExchangeCore::<OnePacket<P>, _>::new_core(|p: &P| u64::from(p.to())),
                    "HaloSink",
                    move |_, _| {
                        move |input, _output| {
                            input.for_each(|_time, data| sink.borrow_mut().append(data));
                        }
                    },
                )
                .probe_with(&probe);
        });
        Self {
            input,
            probe,
            inbox,
        }
    }

    /// Queues a packet of the current round.
    pub(crate) fn send(&mut self, p: P) {
        self.input.send(p);
    }

    /// Closes round `round` and runs the worker until every worker's packets of that round
    /// have arrived; returns them (packets of later rounds, from faster workers, are kept).
    pub(crate) fn deliver(&mut self, worker: &mut Worker, round: u64) -> Vec<P> {
        self.input.advance_to(round + 1);
        while self.probe.less_than(self.input.time()) {
            worker.step_or_park(None);
        }
        let mut all = self.inbox.borrow_mut();
        let (now, later): (Vec<P>, Vec<P>) = all.drain(..).partition(|p| p.round() == round);
        *all = later;
        now
    }
}
