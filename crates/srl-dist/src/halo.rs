//! The one exchange of a superstep: a timely input of packets routed to their destination
//! worker, a sink that files them, and a probe that says when a round has been delivered.

use std::cell::RefCell;
use std::rc::Rc;

use serde::Serialize;
use serde::de::DeserializeOwned;
use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Exchange;
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
                    Exchange::new(|p: &P| u64::from(p.to())),
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
